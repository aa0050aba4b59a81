"""$setWindowFields: window functions over sorted partitions.

Documents are ordered by (partition key, sortBy) as mongod orders them, then every output field is
computed per document over its window: `documents: [lo, hi]` (positions relative to the current
document) or `range: [lo, hi]` (sortBy values relative to the current one, with `unit` for dates).
Cumulative windows (["unbounded", "current"]) feed one accumulator incrementally; other windows
rebuild theirs per document.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

from ginkgodb.bsonutil.compare import compare, date_millis
from ginkgodb.bsonutil.keycodec import encode_value
from ginkgodb.errors import CommandError, ErrorCode
from ginkgodb.query.expr import MISSING
from ginkgodb.query.expr.compiler import Fn, compile_node, reject_unknown_fields
from ginkgodb.query.expr.values import bson_repr, nullish, num_kind, to_double, type_name
from ginkgodb.query.operation import interruptible
from ginkgodb.query.sort import compile_sort

from .accumulators import parse_accumulator
from .core import Env, Runtime, StageFn, stage
from .fields import set_doc_path, validate_path

UNBOUNDED = None
_UNIT_MS = {"millisecond": 1, "second": 1000, "minute": 60000, "hour": 3600000,
            "day": 86400000, "week": 7 * 86400000}
_UNITS = ("year", "quarter", "month", *_UNIT_MS)
_RANK_OPS = ("$rank", "$denseRank", "$documentNumber")
_ORDER_OPS = ("$shift", "$locf", "$linearFill", "$expMovingAvg", "$derivative", "$integral")


def _fail(msg: str) -> CommandError:
    return CommandError(ErrorCode.FailedToParse, msg)


class Window:
    """Window bounds: kind 'documents' or 'range'; None is unbounded, 0 is current."""

    __slots__ = ("kind", "lo", "hi", "unit")

    def __init__(self, kind: str, lo: Any, hi: Any, unit: str | None) -> None:
        self.kind, self.lo, self.hi, self.unit = kind, lo, hi, unit

    @property
    def whole(self) -> bool:
        return self.lo is UNBOUNDED and self.hi is UNBOUNDED

    @property
    def cumulative(self) -> bool:
        return self.kind == "documents" and self.lo is UNBOUNDED and self.hi == 0


def _bound(kind: str, b: Any, unit: str | None) -> Any:
    if b == "unbounded" and type(b) is str:
        return UNBOUNDED
    if b == "current" and type(b) is str:
        return 0
    if isinstance(b, bool) or num_kind(b) < 0:
        raise _fail(f"Window bounds must be 'unbounded', 'current', or a number, found "
                    f"{bson_repr(b)}")
    if kind == "documents" or unit is not None:
        x = to_double(b)
        if not math.isfinite(x) or x != int(x):
            raise _fail(f"Numeric document-based bounds must be an integer: {bson_repr(b)}")
        return int(x)
    return b


def parse_window(spec: Any) -> Window:
    if not isinstance(spec, dict):
        raise _fail(f"'window' field must be an object, found {type_name(spec)}")
    for key in spec:
        if key not in ("documents", "range", "unit"):
            raise _fail(f"'window' has an invalid argument: {key}")
    if "documents" in spec and "range" in spec:
        raise _fail("Window bounds can specify either 'documents' or 'range', not both")
    kind = "documents" if "documents" in spec else "range" if "range" in spec else None
    unit = spec.get("unit")
    if "unit" in spec:
        if kind != "range":
            raise _fail("'unit' can only be specified with range-based bounds")
        if type(unit) is not str or unit not in _UNITS:
            raise _fail(f"'unit' must be one of the time units, found {bson_repr(unit)}")
    if kind is None:
        return Window("documents", UNBOUNDED, UNBOUNDED, None)
    bounds = spec[kind]
    if type(bounds) is not list or len(bounds) != 2:
        raise _fail(f"Window bounds must be a 2-element array: {bson_repr(bounds)}")
    lo, hi = (_bound(kind, b, unit) for b in bounds)
    if lo is not UNBOUNDED and hi is not UNBOUNDED and compare(lo, hi) > 0:
        raise CommandError(ErrorCode.WindowLowerAboveUpper,
                           "Lower bound must not exceed upper bound")
    if lo is UNBOUNDED and bounds[0] != "unbounded" or hi is UNBOUNDED and bounds[1] != "unbounded":
        raise _fail("Window bounds are out of order")
    return Window(kind, lo, hi, unit)


# ---- output functions ------------------------------------------------------------------------


class Output:
    """One output field: `compute(partition, sort_values, vars) -> list of values`."""

    def __init__(self, path: list[str], compute: Callable[[list, list, Any], list]) -> None:
        self.path, self.compute = path, compute


def _accumulator_output(op: str, arg: Any, window: Window, env: Env) -> Callable:
    make = parse_accumulator(op, arg, env.scope, unary_check=False)

    def snapshot(v: Any) -> Any:
        return list(v) if type(v) is list else dict(v) if type(v) is dict else v

    def compute(part: list, keys: list, vars: Any) -> list:
        n = len(part)
        if window.whole:
            st = make(None, vars)
            for d in part:
                st.add(d, vars)
            r = st.result()
            return [snapshot(r) for _ in range(n)]
        if window.cumulative:
            st, out = make(None, vars), []
            for d in part:
                st.add(d, vars)
                out.append(snapshot(st.result()))
            return out
        out = []
        for i in interruptible(range(n), every=16):
            st = make(None, vars)
            for j in _members(window, i, n, keys):
                st.add(part[j], vars)
            out.append(st.result())
        return out
    return compute


def _members(window: Window, i: int, n: int, keys: list) -> range | list:
    if window.kind == "range" and num_kind(keys[i]) < 0 and (window.unit is None or
                                                           not _is_date(keys[i])):
        raise CommandError(ErrorCode.WindowRangeSortByNotNumber if window.unit is None
                           else ErrorCode.WindowTimeRangeSortByNotDate,
                           "Invalid range: Expected the sortBy field to be a number"
                           if window.unit is None else
                           "Invalid range: Expected the sortBy field to be a date")
    if window.kind == "documents":
        lo = 0 if window.lo is UNBOUNDED else max(0, i + window.lo)
        hi = n - 1 if window.hi is UNBOUNDED else min(n - 1, i + window.hi)
        return range(lo, hi + 1)
    here = keys[i]
    lo = None if window.lo is UNBOUNDED else _shift_value(here, window.lo, window.unit)
    hi = None if window.hi is UNBOUNDED else _shift_value(here, window.hi, window.unit)
    return [j for j in range(n) if (lo is None or compare(keys[j], lo) >= 0) and
            (hi is None or compare(keys[j], hi) <= 0)]


def _is_date(v: Any) -> bool:
    from ginkgodb.query.expr.dates import is_date
    return is_date(v)


def _shift_value(v: Any, delta: Any, unit: str | None) -> Any:
    if unit is None:
        from ginkgodb.query.expr.ops_arith import add_values
        return add_values([v, delta])
    from ginkgodb.query.expr.dates import UTC, from_millis
    from ginkgodb.query.expr.ops_date import add_to_date
    return from_millis(add_to_date(date_millis(v), unit, int(delta), UTC))


def _rank_output(op: str, sort_key: Callable[[dict], bytes]) -> Callable:
    def compute(part: list, keys: list, vars: Any) -> list:
        out, prev, rank, dense = [], None, 0, 0
        for i, d in enumerate(part):
            k = sort_key(d)
            if op == "$documentNumber":
                out.append(i + 1)
                continue
            if i == 0 or k != prev:
                rank, dense = i + 1, dense + 1
            prev = k
            out.append(rank if op == "$rank" else dense)
        return out
    return compute


def _shift_output(arg: Any, env: Env) -> Callable:
    if not isinstance(arg, dict) or "output" not in arg or "by" not in arg:
        raise _fail("$shift requires 'output' and 'by' to be specified")
    by = arg["by"]
    if isinstance(by, bool) or num_kind(by) < 0 or to_double(by) != int(to_double(by)):
        raise _fail("'$shift:by' field must be an integer, but found by: " + bson_repr(by))
    by = int(to_double(by))
    fn = compile_node(arg["output"], env.scope)
    default = compile_node(arg.get("default", None), env.scope)
    if not getattr(default, "is_const", False):
        raise _fail("'$shift:default' expression must yield a constant value.")

    def compute(part: list, keys: list, vars: Any) -> list:
        out = []
        for i in range(len(part)):
            j = i + by
            if 0 <= j < len(part):
                v = fn(part[j], vars)
                out.append(None if v is MISSING else v)
            else:
                out.append(default(None, None))
        return out
    return compute


def _locf_output(arg: Any, env: Env) -> Callable:
    fn = compile_node(arg, env.scope)

    def compute(part: list, keys: list, vars: Any) -> list:
        out, last = [], None
        for d in part:
            v = fn(d, vars)
            if not nullish(v):
                last = v
            out.append(last)
        return out
    return compute


def _linear_fill_output(arg: Any, env: Env) -> Callable:
    fn = compile_node(arg, env.scope)

    def compute(part: list, keys: list, vars: Any) -> list:
        vals = [fn(d, vars) for d in part]
        out: list = [None if nullish(v) else v for v in vals]
        known = [i for i, v in enumerate(out) if v is not None]
        for a, b in zip(known, known[1:]):
            xa, xb = _axis(keys[a]), _axis(keys[b])
            for i in range(a + 1, b):
                t = (_axis(keys[i]) - xa) / (xb - xa) if xb != xa else 0.0
                out[i] = to_double(out[a]) + t * (to_double(out[b]) - to_double(out[a]))
        return out
    return compute


def _axis(v: Any) -> float:
    if num_kind(v) >= 0:
        return to_double(v)
    return float(date_millis(v))


def _ema_output(arg: Any, env: Env) -> Callable:
    if not isinstance(arg, dict) or "input" not in arg or ("N" in arg) == ("alpha" in arg):
        raise _fail("$expMovingAvg requires 'input' and exactly one of 'N' or 'alpha'")
    fn = compile_node(arg["input"], env.scope)
    alpha = 2.0 / (to_double(arg["N"]) + 1) if "N" in arg else to_double(arg["alpha"])

    def compute(part: list, keys: list, vars: Any) -> list:
        out, avg = [], None
        for d in part:
            v = fn(d, vars)
            if num_kind(v) >= 0:
                x = to_double(v)
                avg = x if avg is None else alpha * x + (1 - alpha) * avg
            out.append(avg)
        return out
    return compute


def _calculus_output(op: str, arg: Any, window: Window, env: Env) -> Callable:
    if not isinstance(arg, dict) or "input" not in arg:
        raise _fail(f"{op} requires an 'input' expression")
    fn = compile_node(arg["input"], env.scope)
    unit = arg.get("unit")
    scale = _UNIT_MS.get(unit, 1) if unit is not None else 1

    def compute(part: list, keys: list, vars: Any) -> list:
        out = []
        for i in interruptible(range(len(part)), every=16):
            idx = list(_members(window, i, len(part), keys))
            pts = [(_axis(keys[j]) / scale, to_double(fn(part[j], vars))) for j in idx
                   if num_kind(fn(part[j], vars)) >= 0]
            if op == "$derivative":
                out.append(None if len(pts) < 2 or pts[-1][0] == pts[0][0] else
                           (pts[-1][1] - pts[0][1]) / (pts[-1][0] - pts[0][0]))
            else:
                out.append(sum((b[0] - a[0]) * (a[1] + b[1]) / 2 for a, b in zip(pts, pts[1:])))
        return out
    return compute


# ---- parsing -----------------------------------------------------------------------------------


def _output(name: str, spec: Any, sort_spec: Any, env: Env) -> Output:
    path = validate_path(name)
    if not isinstance(spec, dict):
        raise _fail(f"setWindowFields output field '{name}' must be an object")
    ops = [k for k in spec if k != "window"]
    if len(ops) != 1 or not ops[0].startswith("$"):
        if any(k in _RANK_OPS for k in ops):
            raise CommandError(ErrorCode.WindowRankOperatorWithWindow,
                               f"{ops[0]} does not accept a 'window' field or other "
                               "arguments")
        raise _fail(f"Expected exactly one window function in output field '{name}', found "
                    f"{len(ops)}")
    op = ops[0]
    window = parse_window(spec["window"]) if "window" in spec else \
        Window("documents", UNBOUNDED, UNBOUNDED, None)
    _check_window_needs(op, spec, window, sort_spec)
    arg = spec[op]
    if op in _RANK_OPS:
        if arg != {} or type(arg) is not dict:
            raise CommandError(ErrorCode.WindowRankOperatorArgNotEmpty,
                               f"{op} must be specified with '{{}}' as the value")
        return Output(path, _rank_output(op, compile_sort(sort_spec).key))
    if op == "$shift":
        return Output(path, _shift_output(arg, env))
    if op == "$locf":
        return Output(path, _locf_output(arg, env))
    if op == "$linearFill":
        return Output(path, _linear_fill_output(arg, env))
    if op == "$expMovingAvg":
        return Output(path, _ema_output(arg, env))
    if op in ("$derivative", "$integral"):
        return Output(path, _calculus_output(op, arg, window, env))
    if op in ("$covariancePop", "$covarianceSamp"):
        return Output(path, _covariance_output(op, arg, window, env))
    return Output(path, _accumulator_output(op, arg, window, env))


def _check_window_needs(op: str, spec: dict, window: Window, sort_spec: Any) -> None:
    if op in _RANK_OPS + ("$shift", "$locf", "$linearFill", "$expMovingAvg"):
        if "window" in spec:
            raise CommandError(ErrorCode.WindowRankOperatorWithWindow if op in _RANK_OPS
                               else ErrorCode.FailedToParse,
                               f"{op} does not accept a 'window' field")
        if op in _RANK_OPS and (sort_spec is None or len(sort_spec) != 1):
            raise CommandError(ErrorCode.WindowRankOperatorSortByNotSingle,
                               f"{op} must be specified with a top level sortBy "
                               "expression with exactly one element")
        if op != "$locf" and sort_spec is None:
            raise _fail(f"{op} requires a sortBy")
        return
    if window.whole:
        return
    if window.kind == "documents" and sort_spec is None:
        raise CommandError(ErrorCode.WindowDocumentBoundsWithoutSortBy,
                           "Document-based bounds require a sortBy")
    if window.kind == "range" and (sort_spec is None or len(sort_spec) != 1):
        raise CommandError(ErrorCode.WindowRangeBoundsSortByNotSingle,
                           "Range-based bounds require sortBy a single field")
    if window.kind == "range" and next(iter(sort_spec.values())) == -1:
        raise CommandError(ErrorCode.WindowRangeSortByNotAscending,
                           "Range-based bounds require an ascending sortBy")


def _covariance_output(op: str, arg: Any, window: Window, env: Env) -> Callable:
    if type(arg) is not list or len(arg) != 2:
        return lambda part, keys, vars: [None] * len(part)
    fx, fy = compile_node(arg[0], env.scope), compile_node(arg[1], env.scope)
    sample = op == "$covarianceSamp"

    def compute(part: list, keys: list, vars: Any) -> list:
        out = []
        for i in interruptible(range(len(part)), every=16):
            pts = []
            for j in _members(window, i, len(part), keys):
                x, y = fx(part[j], vars), fy(part[j], vars)
                if num_kind(x) >= 0 and num_kind(y) >= 0:
                    pts.append((to_double(x), to_double(y)))
            n = len(pts)
            if n == 0 or (sample and n < 2):
                out.append(None)
                continue
            mx, my = sum(p[0] for p in pts) / n, sum(p[1] for p in pts) / n
            cov = sum((p[0] - mx) * (p[1] - my) for p in pts)
            out.append(cov / (n - 1 if sample else n))
        return out
    return compute


@stage("$setWindowFields")
def parse_set_window_fields(spec: Any, env: Env) -> StageFn:
    if not isinstance(spec, dict):
        raise _fail("the $setWindowFields stage specification must be an object")
    reject_unknown_fields("$setWindowFields", spec, ("partitionBy", "sortBy", "output"))
    if "output" not in spec:
        raise CommandError(ErrorCode.IDLFailedToParse, "BSON field '$setWindowFields.output' is "
                                                       "missing but a required field")
    sort_spec = spec.get("sortBy")
    if sort_spec is not None and not isinstance(sort_spec, dict):
        raise CommandError(ErrorCode.TypeMismatch, "BSON field '$setWindowFields.sortBy' is the "
                                                   f"wrong type '{type_name(sort_spec)}', expected "
                                                   "type 'object'")
    sort = compile_sort(sort_spec) if sort_spec else None
    output = spec["output"]
    if not isinstance(output, dict):
        raise CommandError(ErrorCode.TypeMismatch, "BSON field '$setWindowFields.output' is the "
                                                   f"wrong type '{type_name(output)}', expected "
                                                   "type 'object'")
    outputs = [_output(name, value, sort_spec, env) for name, value in output.items()]
    partition = compile_node(spec["partitionBy"], env.scope) if "partitionBy" in spec else None
    return _window_stage(partition, sort, outputs)


def _window_stage(partition: Fn | None, sort: Any, outputs: list[Output]) -> StageFn:
    sort_key = sort.key if sort is not None else None
    first_path = sort.paths[0] if sort is not None else None

    def run(docs: Iterator[dict], rt: Runtime) -> Iterator[dict]:
        vars = rt.vars
        rows = []
        for i, d in enumerate(docs):
            p = partition(d, vars) if partition is not None else None
            pk = encode_value(None if p is MISSING else p)
            rows.append((pk, sort_key(d) if sort_key else b"", i, d))
        rows.sort(key=lambda r: (r[0], r[1], r[2]))
        for part in _partitions(rows):
            keys = [_sort_value(d, first_path) for d in part] if first_path else [None] * len(part)
            columns = [o.compute(part, keys, vars) for o in outputs]
            for i, d in enumerate(part):
                out = d
                for o, col in zip(outputs, columns):
                    v = col[i]
                    out = set_doc_path(out, o.path, v) if v is not MISSING else out
                yield out
    return run


def _partitions(rows: list[tuple]) -> Iterator[list[dict]]:
    """The documents of `rows` (partition key, sort key, position, document), one partition
    (a run of equal partition keys) at a time."""
    start = 0
    while start < len(rows):
        end = start
        while end < len(rows) and rows[end][0] == rows[start][0]:
            end += 1
        yield [r[3] for r in rows[start:end]]
        start = end


def _sort_value(doc: dict, path: list[str]) -> Any:
    v: Any = doc
    for p in path:
        if not isinstance(v, dict):
            return None
        v = v.get(p)
    return v

