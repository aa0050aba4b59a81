"""Intervals of BSON values for index bounds, and their algebra (union, intersection, complement).

An endpoint keeps two things: the value explain prints, and its key-codec bytes. All comparisons
use the bytes, because byte order is BSON order. So type-bracket edges that no Python value can
stand for (the lowest DBPointer or Code) are plain byte strings with a display text. Interval
lists are always ascending and disjoint.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from bson.datetime_ms import DatetimeMS
from bson.max_key import MaxKey
from bson.min_key import MinKey
from bson.objectid import ObjectId
from bson.regex import Regex
from bson.timestamp import Timestamp

from ..bsonutil import types as T
from ..bsonutil.keycodec import bracket_min, encode_value
from .explain_format import Labelled, format_value


def _same(a: Any, b: Any) -> bool:
    """Values equal as the dataclass compared them (==), without raising on odd types."""
    try:
        return a is b or bool(a == b)
    except Exception:  # values that refuse comparison: the same object only
        return a is b


class TypeEdge(Labelled):
    """The lowest key of a type bracket that has no decoded Python value (DBPointer, Code)."""

    __slots__ = ("key", "explain_text")

    def __init__(self, bracket: int, explain_text: str) -> None:
        self.key = bracket_min(bracket)
        self.explain_text = explain_text


class Bound:
    """An endpoint: `value` (what explain prints) and `key` (its ascending key-codec bytes).

    Immutable by convention. A plain slotted class rather than a frozen dataclass: a large
    `$in` makes one per value, and a frozen dataclass's __init__ costs several times more."""

    __slots__ = ("value", "key")

    def __init__(self, value: Any, key: bytes) -> None:
        self.value, self.key = value, key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Bound) and self.key == other.key and _same(self.value, other.value)

    def __hash__(self) -> int:
        return hash(self.key)

    def __repr__(self) -> str:
        return f"Bound(value={self.value!r}, key={self.key!r})"

    @staticmethod
    def of(value: Any) -> Bound:
        if isinstance(value, TypeEdge):
            return Bound(value, value.key)
        return Bound(value, encode_value(value))


class Interval:
    """[low, high] with inclusive flags; immutable by convention (see Bound)."""

    __slots__ = ("low", "low_inclusive", "high", "high_inclusive")

    def __init__(self, low: Bound, low_inclusive: bool, high: Bound, high_inclusive: bool) -> None:
        self.low, self.low_inclusive, self.high, self.high_inclusive = low, low_inclusive, high, high_inclusive

    def _parts(self) -> tuple:
        return self.low, self.low_inclusive, self.high, self.high_inclusive

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Interval) and self._parts() == other._parts()

    def __hash__(self) -> int:
        return hash(self._parts())

    def __repr__(self) -> str:
        return (f"Interval(low={self.low!r}, low_inclusive={self.low_inclusive!r}, high={self.high!r}, "
                f"high_inclusive={self.high_inclusive!r})")

    def is_empty(self) -> bool:
        if self.low.key != self.high.key:
            return self.low.key > self.high.key
        return not (self.low_inclusive and self.high_inclusive)

    def is_point(self) -> bool:
        return self.low.key == self.high.key and self.low_inclusive and self.high_inclusive

    def to_explain(self, descending: bool = False) -> str:
        """mongod's Interval::toString; a descending index field lists it high-to-low."""
        if descending:
            return (("[" if self.high_inclusive else "(") + format_value(self.high.value) + ", "
                    + format_value(self.low.value) + ("]" if self.low_inclusive else ")"))
        return (("[" if self.low_inclusive else "(") + format_value(self.low.value) + ", "
                + format_value(self.high.value) + ("]" if self.high_inclusive else ")"))


MIN_KEY = Bound.of(MinKey())
MAX_KEY = Bound.of(MaxKey())
NULL = Bound.of(None)


def make(low: Any, low_inclusive: bool, high: Any, high_inclusive: bool) -> Interval:
    return Interval(_as_bound(low), low_inclusive, _as_bound(high), high_inclusive)


def point(value: Any) -> Interval:
    b = _as_bound(value)
    return Interval(b, True, b, True)


def points_from_keys(items: list[tuple[bytes, Any]]) -> list[Interval]:
    """Point intervals for (key, value) pairs already sorted by distinct key: no re-encoding,
    no union (they are disjoint and ascending by construction)."""
    out = []
    for key, value in items:
        b = Bound(value, key)
        out.append(Interval(b, True, b, True))
    return out


def full() -> Interval:
    return Interval(MIN_KEY, True, MAX_KEY, True)


def is_full(intervals: list[Interval]) -> bool:
    return len(intervals) == 1 and intervals[0] == full()


def _as_bound(v: Any) -> Bound:
    return v if isinstance(v, Bound) else Bound.of(v)


# ---------------------------------------------------------------- algebra

def _start_key(iv: Interval) -> tuple[bytes, bool]:
    return iv.low.key, not iv.low_inclusive


def union(intervals: Iterable[Interval]) -> list[Interval]:
    """Sorted, merged, non-empty intervals covering the same values."""
    ivs = sorted((iv for iv in intervals if not iv.is_empty()), key=_start_key)
    out: list[Interval] = []
    for iv in ivs:
        if out and _touches(out[-1], iv):
            last = out[-1]
            if (iv.high.key, iv.high_inclusive) > (last.high.key, last.high_inclusive):
                out[-1] = Interval(last.low, last.low_inclusive, iv.high, iv.high_inclusive)
        else:
            out.append(iv)
    return out


def _touches(a: Interval, b: Interval) -> bool:
    """b starts no later than a ends (overlap or adjacency), given a starts first."""
    if b.low.key != a.high.key:
        return b.low.key < a.high.key
    return a.high_inclusive or b.low_inclusive


def intersect(xs: list[Interval], ys: list[Interval]) -> list[Interval]:
    """Intersection of two sorted disjoint interval lists: one merge pass, O(len(xs) + len(ys))."""
    out: list[Interval] = []
    i = j = 0
    while i < len(xs) and j < len(ys):
        x, y = xs[i], ys[j]
        iv = _intersect_one(x, y)
        if not iv.is_empty():
            out.append(iv)
        # advance whichever ends first (both when they end together)
        if (x.high.key, x.high_inclusive) < (y.high.key, y.high_inclusive):
            i += 1
        elif (y.high.key, y.high_inclusive) < (x.high.key, x.high_inclusive):
            j += 1
        else:
            i += 1
            j += 1
    return union(out)


def _intersect_one(x: Interval, y: Interval) -> Interval:
    if x.low.key != y.low.key:
        low, low_inc = (x.low, x.low_inclusive) if x.low.key > y.low.key else (y.low, y.low_inclusive)
    else:
        low, low_inc = x.low, x.low_inclusive and y.low_inclusive
    if x.high.key != y.high.key:
        high, high_inc = (x.high, x.high_inclusive) if x.high.key < y.high.key else (y.high, y.high_inclusive)
    else:
        high, high_inc = x.high, x.high_inclusive and y.high_inclusive
    return Interval(low, low_inc, high, high_inc)


def complement(intervals: list[Interval]) -> list[Interval]:
    """[MinKey, MaxKey] minus a sorted disjoint list (mongod's OrderedIntervalList::complement)."""
    out = []
    cur, cur_inc = MIN_KEY, True
    for iv in intervals:
        gap = Interval(cur, cur_inc, iv.low, not iv.low_inclusive)
        if not gap.is_empty():
            out.append(gap)
        cur, cur_inc = iv.high, not iv.high_inclusive
    tail = Interval(cur, cur_inc, MAX_KEY, True)
    if not tail.is_empty():
        out.append(tail)
    return out


def contains(iv: Interval, key: bytes) -> bool:
    """Whether the value with ascending encoding `key` lies inside `iv`."""
    above = key > iv.low.key or (key == iv.low.key and iv.low_inclusive)
    below = key < iv.high.key or (key == iv.high.key and iv.high_inclusive)
    return above and below


def hull(intervals: list[Interval]) -> Interval:
    """The smallest single interval covering a non-empty sorted list."""
    first, last = intervals[0], intervals[-1]
    return Interval(first.low, first.low_inclusive, last.high, last.high_inclusive)


# ---------------------------------------------------------------- type brackets

_EDGE_DBPOINTER = TypeEdge(T.BRACKET_DBPOINTER, "DBRef('',000000000000000000000000)")
_EDGE_CODE = TypeEdge(T.BRACKET_CODE, "")
_EDGE_CODE_WSCOPE = TypeEdge(T.BRACKET_CODE_WSCOPE, "CodeWScope( , {})")

# The lowest value of each bracket (mongod's appendMinForType).
_MIN_FOR_BRACKET: dict[int, Any] = {
    T.BRACKET_MINKEY: MinKey(), T.BRACKET_UNDEFINED: T.Undefined(), T.BRACKET_NULL: None,
    T.BRACKET_NUMBER: float("nan"), T.BRACKET_STRING: "", T.BRACKET_OBJECT: {},
    T.BRACKET_ARRAY: [], T.BRACKET_BINARY: b"", T.BRACKET_OBJECTID: ObjectId(b"\x00" * 12),
    T.BRACKET_BOOL: False, T.BRACKET_DATE: DatetimeMS(-2**63), T.BRACKET_TIMESTAMP: Timestamp(0, 0),
    T.BRACKET_REGEX: Regex("", ""), T.BRACKET_DBPOINTER: _EDGE_DBPOINTER, T.BRACKET_CODE: _EDGE_CODE,
    T.BRACKET_CODE_WSCOPE: _EDGE_CODE_WSCOPE, T.BRACKET_MAXKEY: MaxKey(),
}
# The highest value of each bracket that has one; the others end below the next bracket.
_MAX_FOR_BRACKET: dict[int, Any] = {
    T.BRACKET_MINKEY: MinKey(), T.BRACKET_UNDEFINED: T.Undefined(), T.BRACKET_NULL: None,
    T.BRACKET_NUMBER: float("inf"), T.BRACKET_OBJECTID: ObjectId(b"\xff" * 12),
    T.BRACKET_BOOL: True, T.BRACKET_DATE: DatetimeMS(2**63 - 1),
    T.BRACKET_TIMESTAMP: Timestamp(2**32 - 1, 2**32 - 1), T.BRACKET_MAXKEY: MaxKey(),
}
_NEXT_BRACKET = {
    T.BRACKET_STRING: T.BRACKET_OBJECT, T.BRACKET_OBJECT: T.BRACKET_ARRAY,
    T.BRACKET_ARRAY: T.BRACKET_BINARY, T.BRACKET_BINARY: T.BRACKET_OBJECTID,
    T.BRACKET_REGEX: T.BRACKET_DBPOINTER, T.BRACKET_DBPOINTER: T.BRACKET_CODE,
    T.BRACKET_CODE: T.BRACKET_CODE_WSCOPE, T.BRACKET_CODE_WSCOPE: T.BRACKET_MAXKEY,
}


def min_for_bracket(bracket: int) -> Bound:
    return Bound.of(_MIN_FOR_BRACKET[bracket])


def max_for_bracket(bracket: int) -> tuple[Bound, bool]:
    """(upper edge of the bracket, whether it is inclusive)."""
    if bracket in _MAX_FOR_BRACKET:
        return Bound.of(_MAX_FOR_BRACKET[bracket]), True
    return min_for_bracket(_NEXT_BRACKET[bracket]), False


def bracket_interval(bracket: int) -> Interval:
    """Every value of one type bracket (the bounds of `$type`)."""
    high, inclusive = max_for_bracket(bracket)
    return Interval(min_for_bracket(bracket), True, high, inclusive)
