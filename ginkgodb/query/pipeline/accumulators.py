"""$group accumulators. Each factory parses its argument once and builds a small per-group state
object with `add(doc, vars)` and `result()`; the hot path is one call per group member."""
from __future__ import annotations

import decimal
import functools
import heapq
from collections.abc import Callable
from typing import Any

from ginkgodb.errors import CommandError, ErrorCode
from ginkgodb.query.expr import MISSING
from ginkgodb.query.expr.accumulate import StdDev, Summer
from ginkgodb.query.expr.compiler import Fn, Scope, compile_node
from ginkgodb.query.expr.memory import accumulator_limit_error, approximate_size
from ginkgodb.query.expr.ops_accum import validate_n
from ginkgodb.query.expr.ops_logic import cmp_values
from ginkgodb.query.expr.values import (
    DEC_CTX,
    DOUBLE,
    INT,
    LONG,
    bson_repr,
    hash_key,
    make_dec,
    make_int,
    nullish,
    num_kind,
    to_dec,
    type_name,
)
from ginkgodb.query.knobs import KNOBS

Factory = Callable[[Any], Any]  # group key -> state


def _unary(name: str, arg: Any, scope: Scope) -> Fn:
    return compile_node(arg, scope)


# ---- states -------------------------------------------------------------------------------------


class _Sum(Summer):
    """$sum: a Summer fed straight from the document (top-level fields read without a call)."""

    __slots__ = ("fn", "key")

    def __init__(self, fn: Fn) -> None:
        Summer.__init__(self, exact=True)
        self.fn = fn
        path = getattr(fn, "field_path", None)
        self.key = path if path is not None and "." not in path else None

    def add(self, doc: Any, vars: Any) -> None:
        key = self.key
        v = doc.get(key) if key is not None else self.fn(doc, vars)
        t = type(v)
        if t is float:
            self.floats.append(v)
            self.count += 1
            if self.kind < DOUBLE:
                self.kind = DOUBLE
        elif t is int and -2147483648 <= v <= 2147483647:
            self.ints += v
            self.count += 1
        else:
            self.push(v)

    def result(self) -> Any:
        return self.total()


class _Avg(_Sum):
    __slots__ = ()

    def result(self) -> Any:
        return self.average()


class _Count:
    """$sum of a constant (1 for counting): no expression evaluation per document."""

    __slots__ = ("n", "step")

    def __init__(self, step: Any) -> None:
        self.n, self.step = 0, step

    def add(self, doc: Any, vars: Any) -> None:
        self.n += 1

    def result(self) -> Any:
        step, n = self.step, self.n
        k = num_kind(step)
        if k == INT or k == LONG:
            return make_int(int(step) * n, k)
        if k == DOUBLE:
            return float(step) * n
        return make_dec(DEC_CTX.multiply(to_dec(step), decimal.Decimal(n)))


class _Extreme:
    __slots__ = ("fn", "sign", "best", "found")

    def __init__(self, fn: Fn, sign: int) -> None:
        self.fn, self.sign, self.best, self.found = fn, sign, None, False

    def add(self, doc: Any, vars: Any) -> None:
        v = self.fn(doc, vars)
        if nullish(v):
            return
        if not self.found or cmp_values(v, self.best) * self.sign > 0:
            self.best, self.found = v, True

    def result(self) -> Any:
        return self.best


class _First:
    __slots__ = ("fn", "value", "seen", "meter")

    def __init__(self, fn: Fn) -> None:
        self.fn, self.value, self.seen, self.meter = fn, None, False, None

    def add(self, doc: Any, vars: Any) -> None:
        v = self.fn(doc, vars)
        if not self.seen:
            self.value, self.seen = (None if v is MISSING else v), True
            if self.meter is not None:
                self.meter.used += approximate_size(self.value)

    def result(self) -> Any:
        return self.value


class _Last:
    __slots__ = ("fn", "value")

    def __init__(self, fn: Fn) -> None:
        self.fn, self.value = fn, None

    def add(self, doc: Any, vars: Any) -> None:
        v = self.fn(doc, vars)
        self.value = None if v is MISSING else v

    def result(self) -> Any:
        return self.value


class _Push:
    __slots__ = ("fn", "items", "size", "meter")

    def __init__(self, fn: Fn) -> None:
        self.fn, self.items, self.size, self.meter = fn, [], 0, None

    def add(self, doc: Any, vars: Any) -> None:
        v = self.fn(doc, vars)
        if v is not MISSING:
            self.size = _grown(self, "$push", self.size, approximate_size(v), KNOBS.max_push_bytes)
            self.items.append(v)

    def result(self) -> Any:
        return self.items


class _AddToSet:
    __slots__ = ("fn", "items", "seen", "size", "meter")

    def __init__(self, fn: Fn) -> None:
        self.fn, self.items, self.seen, self.size, self.meter = fn, [], set(), 0, None

    def add(self, doc: Any, vars: Any) -> None:
        v = self.fn(doc, vars)
        if v is MISSING:
            return
        k = hash_key(v)
        if k not in self.seen:
            self.size = _grown(self, "$addToSet", self.size, approximate_size(v), KNOBS.max_add_to_set_bytes)
            self.seen.add(k)
            self.items.append(v)

    def result(self) -> Any:
        return self.items


def _grown(state: Any, op: str, size: int, more: int, limit: int) -> int:
    """An accumulator's size after adding `more` bytes: mongod's per-accumulator limit (146),
    and the $group's meter (the stage's own limit, 292 or spilling)."""
    size += more
    if size > limit:
        raise accumulator_limit_error(op, limit)
    meter = state.meter
    if meter is not None:
        meter.used += more
    return size


class _MergeObjects:
    __slots__ = ("fn", "out")

    def __init__(self, fn: Fn) -> None:
        self.fn, self.out = fn, {}

    def add(self, doc: Any, vars: Any) -> None:
        v = self.fn(doc, vars)
        if nullish(v):
            return
        if not isinstance(v, dict):
            raise CommandError(ErrorCode.MergeObjectsAccumulatorInputNotObject,
                               "$mergeObjects requires object inputs, but input "
                               f"{bson_repr(v)} is of type {type_name(v)}")
        self.out.update(v)

    def result(self) -> Any:
        return self.out


class _ArrayUnion:
    """$concatArrays / $setUnion as accumulators: every input must be an array."""

    __slots__ = ("fn", "items", "seen", "name", "meter")

    def __init__(self, fn: Fn, name: str) -> None:
        self.fn, self.items, self.name, self.meter = fn, [], name, None
        self.seen: set | None = set() if name == "$setUnion" else None

    def add(self, doc: Any, vars: Any) -> None:
        v = self.fn(doc, vars)
        if type(v) is not list:
            if v is MISSING:
                return
            raise CommandError(ErrorCode.TypeMismatch, f"{self.name} only supports arrays, not "
                                                       f"{type_name(v)}")
        if self.meter is not None:
            self.meter.used += approximate_size(v)
        if self.seen is None:
            self.items.extend(v)
            return
        for x in v:
            k = hash_key(x)
            if k not in self.seen:
                self.seen.add(k)
                self.items.append(x)

    def result(self) -> Any:
        return self.items


class _StdDev:
    __slots__ = ("fn", "acc", "sample")

    def __init__(self, fn: Fn, sample: bool) -> None:
        self.fn, self.acc, self.sample = fn, StdDev(), sample

    def add(self, doc: Any, vars: Any) -> None:
        self.acc.add(self.fn(doc, vars))

    def result(self) -> Any:
        return self.acc.result(self.sample)


# ---- N accumulators ------------------------------------------------------------------------------


class _FirstN:
    __slots__ = ("fn", "n", "items", "last")

    def __init__(self, fn: Fn, n: int, last: bool) -> None:
        self.fn, self.n, self.items, self.last = fn, n, [], last

    def add(self, doc: Any, vars: Any) -> None:
        if self.last or len(self.items) < self.n:
            v = self.fn(doc, vars)
            self.items.append(None if v is MISSING else v)
            if self.last and len(self.items) > self.n:
                del self.items[0]

    def result(self) -> Any:
        return self.items


class _Ranked:
    """$maxN/$minN/$top/$bottom/$topN/$bottomN: keep the best n by a sort key."""

    __slots__ = ("fn", "key_fn", "n", "heap", "count", "single", "skip_null", "reverse")

    def __init__(self, fn: Fn, key_fn: Callable[[Any, Any, Any], Any], n: int, single: bool,
                 skip_null: bool, reverse: bool = False) -> None:
        self.fn, self.key_fn, self.n, self.single = fn, key_fn, n, single
        self.heap: list = []
        self.count = 0
        self.skip_null, self.reverse = skip_null, reverse

    def add(self, doc: Any, vars: Any) -> None:
        v = self.fn(doc, vars)
        if self.skip_null and nullish(v):
            return
        if v is MISSING:
            v = None
        key = self.key_fn(doc, vars, v)
        self.count += 1
        item = (_Neg(key), -self.count, v)
        if len(self.heap) < self.n:
            heapq.heappush(self.heap, item)
        elif item > self.heap[0]:
            heapq.heapreplace(self.heap, item)

    def result(self) -> Any:
        items = sorted(self.heap, reverse=not self.reverse)
        values = [v for _, _, v in items]
        return (values[0] if values else None) if self.single else values


@functools.total_ordering
class _Neg:
    """Reverses a key's order so a min-heap keeps the n smallest keys."""

    __slots__ = ("k",)

    def __init__(self, k: Any) -> None:
        self.k = k

    def __lt__(self, other: _Neg) -> bool:
        return self.k > other.k

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Neg) and self.k == other.k


# ---- parsing -------------------------------------------------------------------------------------


def _value_key(sign: int) -> Callable[[Any, Any, Any], Any]:
    from ginkgodb.bsonutil.keycodec import encode_key
    direction = [1 if sign < 0 else -1]
    return lambda doc, vars, v: encode_key([v], direction)


def _n_args(name: str, arg: Any, scope: Scope, fields: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(arg, dict):
        raise CommandError(ErrorCode.NOperatorSpecNotObject,
                           f"specification must be an object; found {bson_repr(arg)}")
    for key in arg:
        if key not in fields:
            raise CommandError(ErrorCode.NOperatorUnknownArgument,
                               f"Unknown argument for 'n' operator: {key}")
    top = "sortBy" in fields
    codes = {"n": ErrorCode.TopBottomMissingN if top else ErrorCode.NOperatorMissingN,
             "input": ErrorCode.NOperatorMissingInput, "sortBy": ErrorCode.TopBottomMissingSortBy,
             "output": ErrorCode.TopBottomMissingOutput}
    for key in fields:
        if key not in arg:
            raise CommandError(codes[key], f"Missing value for '{key}'")
    return arg


def _group_n(name: str, n_fn: Fn, gid: Any, vars: Any) -> int:
    try:
        return validate_n(name, n_fn({"_id": gid}, vars))
    except CommandError as exc:
        raise CommandError(ErrorCode.GroupNNotValid, exc.errmsg) from None


def _n_fn(arg: dict, scope: Scope) -> Fn:
    return compile_node(arg["n"], scope.bind())


def parse_accumulator(name: str, arg: Any, scope: Scope, unary_check: bool = True
                      ) -> Callable[[Any, Any], Any]:
    """A factory `(group_id, vars) -> state` for one accumulator field of $group (window
    functions pass `unary_check=False`: there an array argument is an array expression)."""
    simple: dict[str, Callable[[Fn], Any]] = {
        "$sum": _Sum, "$avg": _Avg, "$first": _First, "$last": _Last, "$push": _Push,
        "$addToSet": _AddToSet, "$mergeObjects": _MergeObjects,
        "$min": lambda fn: _Extreme(fn, -1), "$max": lambda fn: _Extreme(fn, 1),
        "$stdDevPop": lambda fn: _StdDev(fn, False), "$stdDevSamp": lambda fn: _StdDev(fn, True),
    }
    if unary_check and isinstance(arg, list) and name not in ("$firstN", "$lastN", "$maxN", "$minN", "$top",
                                               "$bottom", "$topN", "$bottomN", "$percentile",
                                               "$median"):
        raise CommandError(ErrorCode.AccumulatorIsUnary,
                           f"The {name} accumulator is a unary operator")
    if name in ("$concatArrays", "$setUnion"):
        fn = _unary(name, arg, scope)
        return lambda gid, vars: _ArrayUnion(fn, name)
    if name in ("$percentile", "$median"):
        from .percentile import parse_percentile
        return parse_percentile(name, arg, scope)
    if name in simple:
        fn = _unary(name, arg, scope)
        make = simple[name]
        if name == "$sum" and getattr(fn, "is_const", False):
            step = fn.value  # type: ignore[attr-defined]
            if num_kind(step) >= 0:
                return lambda gid, vars: _Count(step)
        return lambda gid, vars: make(fn)
    if name == "$count":
        if arg != {}:
            raise CommandError(ErrorCode.TypeMismatch, "$count takes no arguments, i.e. $count:{}")
        return lambda gid, vars: _Count(1)
    if name in ("$firstN", "$lastN"):
        a = _n_args(name, arg, scope, ("input", "n"))
        fn, n_fn = compile_node(a["input"], scope), _n_fn(a, scope)
        last = name == "$lastN"
        return lambda gid, vars: _FirstN(fn, _group_n(name, n_fn, gid, vars), last)
    if name in ("$maxN", "$minN"):
        a = _n_args(name, arg, scope, ("input", "n"))
        fn, n_fn = compile_node(a["input"], scope), _n_fn(a, scope)
        key = _value_key(1 if name == "$maxN" else -1)
        return lambda gid, vars: _Ranked(fn, key, _group_n(name, n_fn, gid, vars), False, True)
    if name in ("$top", "$bottom", "$topN", "$bottomN"):
        return _parse_top(name, arg, scope)
    if name == "$accumulator":
        from ginkgodb.query.js import AccumulatorState, parse_js_accumulator
        parts = parse_js_accumulator(arg, lambda v: compile_node(v, scope), type_name)
        init_args = parts.get("initArgs")
        return lambda gid, vars: AccumulatorState(
            parts, init_args({"_id": gid}, vars) if init_args is not None else [], bson_repr)
    raise CommandError(ErrorCode.UnknownGroupOperator, f"unknown group operator '{name}'")


def _parse_top(name: str, arg: Any, scope: Scope) -> Callable[[Any, Any], Any]:
    from ginkgodb.query.sort import compile_sort
    many = name.endswith("N")
    a = _n_args(name, arg, scope, ("n", "sortBy", "output") if many else ("sortBy", "output"))
    sort = compile_sort(a["sortBy"])
    bottom = name.startswith("$bottom")
    output = compile_node(a["output"], scope)
    sort_key = sort.key
    if bottom:
        from ginkgodb.bsonutil.keycodec import invert
        key = lambda doc, vars, v: invert(sort_key(doc))  # noqa: E731
    else:
        key = lambda doc, vars, v: sort_key(doc)  # noqa: E731
    if many:
        n_fn = _n_fn(a, scope)
        return lambda gid, vars: _Ranked(output, key, _group_n(name, n_fn, gid, vars), False,
                                         False, bottom)
    return lambda gid, vars: _Ranked(output, key, 1, True, False)


ACCUMULATOR_NAMES = frozenset({"$sum", "$avg", "$first", "$last", "$push", "$addToSet",
                               "$mergeObjects", "$min", "$max", "$stdDevPop", "$stdDevSamp",
                               "$count", "$firstN", "$lastN", "$maxN", "$minN", "$top",
                               "$bottom", "$topN", "$bottomN", "$concatArrays", "$setUnion",
                               "$percentile", "$median", "$accumulator"})
