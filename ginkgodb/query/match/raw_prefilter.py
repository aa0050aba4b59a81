"""A test on a stored document's BSON bytes that rejects, without decoding, documents a filter
cannot match (issue: scans that decode only what may match).

A string, an ObjectId or a date a document equals is encoded in its bytes exactly as the query's
value encodes alone, whether it is a field's value or an array's element, at any depth: a
string is its length, its UTF-8 bytes and a NUL; an ObjectId its 12 bytes; a date its 8-byte
milliseconds. A number has several encodings that compare equal (int32, int64, double, and a
decimal128 in many forms), and its bytes alone are too common to tell anything (a 4-byte 5 is
also every 4-character string's length), so a number is looked for with the element around it:
its type byte, then the name of the element that holds the matched value, which is the path's
last component (`qty` for `items.qty`) or an array index (digits), then the value in that
type's bytes; any decimal128 element of such a name passes, whatever its value. A boolean is
looked for the same way (one encoding), and so is a range (`$gt`, `$gte`, `$lt`, `$lte`) on a
number, a date or a string, its value bytes matched by a regular expression over the range
(raw_ranges.py); `$exists: true` needs the field's name and its NUL somewhere. So for an
equality (`{f: v}`, `$eq`), an `$in` of such values, an `$all`, a range, `$exists: true` or an
`$elemMatch` over them, a document whose bytes hold none of the needles cannot match. The test
is a conjunction of groups, one group per such predicate that every match must satisfy; a group
passes when any of its needles occurs in the bytes. Predicates it cannot bound (negations,
`$exists: false` among them, `$type`, `$expr`, `$where`, NaN, decimal128 query values,
documents, arrays, regexes, null, which matches missing fields) add no group: they are left to
the compiled filter, which runs on every document the test passes. The test never rejects a
match; it may pass documents that do not match (the bytes occur elsewhere).

Only filters compared without a collation use it: a collation makes strings equal whose bytes
differ (the compiler's Matcher carries it; a collated matcher has none).
"""
from __future__ import annotations

import datetime
import math
import re
import struct
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, Optional, Union

import bson
from bson.datetime_ms import DatetimeMS
from bson.objectid import ObjectId

from .nodes import all_of, any_of
from .raw_ranges import double_range, signed_range, string_range

RawTest = Callable[[bytes], Any]
#: value types whose equality implies their exact encoding in the document's bytes
_EXACT_TYPES = frozenset({str, ObjectId, datetime.datetime, DatetimeMS})
#: more encodings than this in one group, or values in one element search: the test would cost
#: more than it saves
_MAX_NEEDLES = 64
#: the names an array's elements have (`0`, `1`, ...)
_INDEX_NAME = b"[0-9]+"
_INT32, _INT64, _DOUBLE = struct.Struct("<i"), struct.Struct("<q"), struct.Struct("<d")


#: what one search costs, in decodes of a 600-byte document: an alternation of encodings (a
#: literal search) and an element search (it stops at each element of its type)
ENCODINGS_COST, ELEMENT_COST = 0.03, 0.1


class BytesTest:
    """A filter's tests on stored bytes, one per group of needles, each with its cost in decodes
    (`costs`), the cheapest first; called, their conjunction. A scan may keep only those that
    reject enough of its documents to pay for themselves (engine/bytes_test_choice.py)."""

    __slots__ = ("tests", "costs", "_all")

    def __init__(self, tests: tuple[RawTest, ...], costs: tuple[float, ...]) -> None:
        self.tests, self.costs = tests, costs
        self._all = all_of(list(tests))

    def __call__(self, raw: bytes) -> Any:
        return self._all(raw)


def raw_prefilter(spec: Mapping) -> Optional[BytesTest]:
    """The bytes test for a filter, or None when the filter bounds no predicate this way."""
    try:
        groups = _document_groups(spec)
    except Exception:   # a malformed filter: the compiler reports it; no test
        return None
    split = [_split(group) for group in groups if group]
    costed = sorted(((_cost(*parts), parts) for parts in split if _affordable(*parts)), key=lambda c: c[0])
    if not costed:
        return None
    try:
        tests = tuple(_search(*parts) for _, parts in costed)
    except (re.error, RecursionError, OverflowError):   # a test that cannot be built: none (never the query's error)
        return None
    return BytesTest(tests, tuple(cost for cost, _ in costed))


def _split(group: frozenset) -> tuple[list[bytes], dict[tuple[bytes, bytes], set[bytes]]]:
    """A group's encodings, and its elements' values by (type byte, names): one search each."""
    encodings: list[bytes] = []
    by_kind: dict[tuple[bytes, bytes], set[bytes]] = {}
    for n in group:
        if type(n) is bytes:
            encodings.append(n)
        else:
            by_kind.setdefault((n.kind, n.names), set()).add(n.value)
    return encodings, by_kind


def _cost(encodings: list[bytes], by_kind: dict) -> float:
    """The group's searches (_search), in decodes."""
    return (ENCODINGS_COST if encodings else 0.0) + ELEMENT_COST * len(by_kind)


def _affordable(encodings: list[bytes], by_kind: dict) -> bool:
    """At most _MAX_NEEDLES encodings in the group's alternation, and as many values in each of
    its element searches (an `$in` of 40 numbers is four searches of 40 values each: a search
    stops only at its type byte and names, so its values cost little)."""
    return len(encodings) <= _MAX_NEEDLES and all(len(v) <= _MAX_NEEDLES for v in by_kind.values())


class _Element(NamedTuple):
    """An element a document holding a value must contain: its type byte, one of `names`, and
    a value `value` matches (a regular expression over the value's bytes; b"": any value)."""

    kind: bytes
    names: bytes
    value: bytes


Needle = Union[bytes, _Element]   # bytes: a value's encoding, found as it is anywhere


def _search(encodings: list[bytes], by_kind: dict[tuple[bytes, bytes], set[bytes]]) -> RawTest:
    """Whether any of a group's needles occurs, in compiled searches (C) that each open with one
    fixed byte, which the regular expression engine finds fast: the encodings in one alternation
    (each opens with a length or a value byte), the elements in one search per type and names,
    with the values in an alternation after the name (an alternation of whole elements would try
    every branch at every type byte)."""
    searches = []
    if encodings:
        searches.append(re.compile(b"|".join(sorted(map(re.escape, encodings)))).search)
    for (kind, names), values in sorted(by_kind.items()):
        head = re.escape(kind) + b"(?:" + names + b")\x00"
        tail = b"" if b"" in values else b"(?:" + b"|".join(sorted(values)) + b")"
        searches.append(re.compile(head + tail).search)
    return any_of(searches)


def _needles(value: Any, names: bytes) -> Optional[tuple[Needle, ...]]:
    """What every document holding `value` where the predicate looks holds, one of them
    (`names`: the alternatives for the holding element's name), or None when nothing is."""
    kind = type(value)
    if kind in _EXACT_TYPES:
        return (bson.encode({"": value})[6:-1],)   # int32 size, type, empty name's NUL ... the closing NUL
    if kind is bool:
        return (_Element(b"\x08", names, b"\x01" if value else b"\x00"),)   # not special: no escape
    if isinstance(value, (int, float)):
        return _number_needles(value, names)
    return None


def _number_needles(value: Any, names: bytes) -> Optional[tuple[Needle, ...]]:
    """The elements of one of `names` holding a number equal to `value`: its int32 and int64
    when it is an integer in their range, the doubles equal to it exactly (both zeros for 0),
    and any decimal128."""
    if isinstance(value, float):
        if value != value:
            return None   # NaN: equal NaNs have several bit patterns
        whole = int(value) if value.is_integer() else None
        doubles = [value]
    else:
        whole = int(value)
        try:
            exact = float(whole) == whole
        except OverflowError:
            exact = False
        doubles = [float(whole)] if exact else []
    if whole == 0:
        doubles = [0.0, -0.0]
    needles: list[Needle] = [_Element(b"\x13", names, b"")]
    if whole is not None and -2**31 <= whole < 2**31:
        needles.append(_Element(b"\x10", names, re.escape(_INT32.pack(whole))))
    if whole is not None and -2**63 <= whole < 2**63:
        needles.append(_Element(b"\x12", names, re.escape(_INT64.pack(whole))))
    needles += [_Element(b"\x01", names, re.escape(_DOUBLE.pack(d))) for d in doubles]
    return tuple(needles)


#: the range operators, by (is a lower bound, includes the bound)
_RANGES = {"$gt": (True, False), "$gte": (True, True), "$lt": (False, False), "$lte": (False, True)}
_BIG = 1 << 64   # past every int64: an open end of an integer range
_DATE_TYPES = (datetime.datetime, DatetimeMS)


def _range_needles(op: str, value: Any, names: bytes) -> Optional[tuple[Needle, ...]]:
    """The elements of one of `names` whose value satisfies `{$op: value}`: numbers of each type
    (any decimal128) for a number, dates for a date, strings and symbols for a string; None for
    other values (and NaN)."""
    lower, inclusive = _RANGES[op]
    if isinstance(value, _DATE_TYPES):
        ms = _INT64.unpack(bson.encode({"": value})[6:-1])[0]
        lo, hi = ((ms if inclusive else ms + 1), _BIG) if lower else (-_BIG, (ms if inclusive else ms - 1))
        alternatives = signed_range(lo, hi, 8)
        return (_Element(b"\x09", names, _either_of(alternatives)),) if alternatives else None
    if type(value) is str:
        utf8 = value.encode("utf-8", "surrogatepass")
        if b"\x00" in utf8:
            return None   # its NUL and a string's end would look alike
        content = b"[\x00-\xff]{4}" + string_range(utf8, lower, inclusive)   # the length, then the bytes
        return (_Element(b"\x02", names, content), _Element(b"\x0e", names, content))   # a symbol compares alike
    if type(value) is bool or not isinstance(value, (int, float)) or value != value:
        return None
    if lower:
        ints = (_whole_at_least(value, inclusive), _BIG)
        doubles = (_double_at_least(value, inclusive), math.inf)
    else:
        ints = (-_BIG, -_whole_at_least(-value, inclusive))
        doubles = (-math.inf, _double_at_most(value, inclusive))
    needles: list[Needle] = [_Element(b"\x13", names, b"")]
    for kind, width in ((b"\x10", 4), (b"\x12", 8)):
        alternatives = signed_range(ints[0], ints[1], width)
        if alternatives:
            needles.append(_Element(kind, names, _either_of(alternatives)))
    alternatives = double_range(*doubles)
    if alternatives:
        needles.append(_Element(b"\x01", names, _either_of(alternatives)))
    return tuple(needles)


def _whole_at_least(value: Any, inclusive: bool) -> int:
    """The smallest integer above `value` (or equal to it, when `inclusive`); past the int64s
    for an infinity."""
    if isinstance(value, float) and math.isinf(value):
        return _BIG if value > 0 else -_BIG
    return math.ceil(value) if inclusive else math.floor(value) + 1


def _either_of(alternatives: list[bytes]) -> bytes:
    return alternatives[0] if len(alternatives) == 1 else b"(?:" + b"|".join(alternatives) + b")"


def _to_double(value: Any) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _double_at_least(value: Any, inclusive: bool) -> float:
    """The smallest double above `value` (or equal to it, when `inclusive`)."""
    d = _to_double(value)
    if d < value or (d == value and not inclusive):
        d = math.nextafter(d, math.inf)
    return d


def _double_at_most(value: Any, inclusive: bool) -> float:
    """The largest double below `value` (or equal to it, when `inclusive`)."""
    d = _to_double(value)
    if d > value or (d == value and not inclusive):
        d = math.nextafter(d, -math.inf)
    return d


def _names(path: str) -> bytes:
    """The names the element holding a path's value may have: its last component, or an index."""
    return re.escape(path.rpartition(".")[2].encode()) + b"|" + _INDEX_NAME


def _document_groups(spec: Mapping) -> list[frozenset[Needle]]:
    """The groups every document matching a filter document satisfies (an implicit AND)."""
    groups: list[frozenset[Needle]] = []
    for key, value in spec.items():
        if key == "$and" and isinstance(value, list):
            for sub in value:
                if isinstance(sub, Mapping):
                    groups.extend(_document_groups(sub))
        elif key == "$or" and isinstance(value, list) and value:
            either = _either(value)
            if either:
                groups.append(either)
        elif not key.startswith("$"):
            groups.extend(_field_groups(value, _names(key), key.rpartition(".")[2].encode()))
    return groups


def _either(branches: list) -> frozenset[Needle]:
    """An `$or`: a match satisfies every group of one branch, so the union of one group of each
    branch (its smallest) holds; empty when some branch bounds nothing."""
    union: set[Needle] = set()
    for branch in branches:
        groups = _document_groups(branch) if isinstance(branch, Mapping) else []
        if not groups:
            return frozenset()
        union |= min(groups, key=len)
    return frozenset(union)


def _field_groups(value: Any, names: bytes, last: bytes) -> list[frozenset[Needle]]:
    """The groups of one field's condition: a value (equality) or an operator document (`last`:
    the path's last component)."""
    if isinstance(value, Mapping):
        if not value or not all(isinstance(k, str) and k.startswith("$") for k in value):
            return []   # equality to a document: numbers inside compare across types
        return _operator_groups(value, names, last)
    needles = _needles(value, names)
    return [frozenset(needles)] if needles is not None else []


def _operator_groups(ops: Mapping, names: bytes, last: Optional[bytes] = None) -> list[frozenset[Needle]]:
    groups: list[frozenset[Needle]] = []
    for op, arg in ops.items():
        if op == "$exists" and last is not None and (arg is True or (type(arg) in (int, float) and arg)):
            groups.append(frozenset((last + b"\x00",)))   # the element's name and its NUL, somewhere
        elif op == "$eq":
            needles = _needles(arg, names)
            if needles is not None:
                groups.append(frozenset(needles))
        elif op == "$in" and isinstance(arg, list) and arg:
            each = [_needles(v, names) for v in arg]
            if all(n is not None for n in each):
                groups.append(frozenset(n for needles in each if needles is not None for n in needles))
        elif op in _RANGES:
            needles = _range_needles(op, arg, names)
            if needles is not None:
                groups.append(frozenset(needles))
        elif op == "$all" and isinstance(arg, list):
            for v in arg:
                needles = _needles(v, names)
                if needles is not None:
                    groups.append(frozenset(needles))
        elif op == "$elemMatch" and isinstance(arg, Mapping):
            if arg and all(isinstance(k, str) and k.startswith("$") and k not in ("$and", "$or", "$nor")
                           for k in arg):
                groups.extend(_operator_groups(arg, _INDEX_NAME))   # the array's elements themselves
            else:
                groups.extend(_document_groups(arg))
    return groups


__all__ = ["raw_prefilter"]
