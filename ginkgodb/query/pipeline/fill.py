"""$fill (nulls from a value, the last value, or linear interpolation) and $densify."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ginkgodb.bsonutil.compare import compare, date_millis
from ginkgodb.bsonutil.keycodec import encode_value
from ginkgodb.errors import CommandError, ErrorCode
from ginkgodb.query.expr import MISSING
from ginkgodb.query.expr.compiler import compile_node, reject_unknown_fields
from ginkgodb.query.expr.values import bson_repr, nullish, num_kind, to_double
from ginkgodb.query.sort import compile_sort

from .core import Env, Runtime, StageFn, stage
from .fields import get_doc_path, set_doc_path, validate_path
from .windows import _fail, _linear_fill_output, _locf_output, _partitions


def _partition_fn(spec: dict, env: Env) -> Any:
    if "partitionBy" in spec and "partitionByFields" in spec:
        raise _fail("Only one of 'partitionBy' and 'partitionByFields' may be specified")
    if "partitionBy" in spec:
        return compile_node(spec["partitionBy"], env.scope)
    if "partitionByFields" in spec:
        fields = spec["partitionByFields"]
        if type(fields) is not list or not all(type(f) is str for f in fields):
            raise _fail("'partitionByFields' must be an array of strings")
        paths = [validate_path(f) for f in fields]
        return lambda doc, vars: [get_doc_path(doc, p) for p in paths]
    return None


@stage("$fill")
def parse_fill(spec: Any, env: Env) -> StageFn:
    if not isinstance(spec, dict):
        raise _fail("the $fill stage specification must be an object")
    reject_unknown_fields("$fill", spec, ("partitionBy", "partitionByFields", "sortBy", "output"))
    if not isinstance(spec.get("output"), dict):
        raise CommandError(ErrorCode.IDLFailedToParse, "BSON field '$fill.output' is missing "
                                                       "but a required field")
    sort_spec = spec.get("sortBy")
    sort = compile_sort(sort_spec) if sort_spec is not None else None
    partition = _partition_fn(spec, env)
    fills = []
    for name, how in spec["output"].items():
        path = validate_path(name)
        if not isinstance(how, dict) or len(how) != 1 or next(iter(how)) not in ("value",
                                                                                 "method"):
            raise _fail("Each $fill output specification must have exactly one of 'value' or "
                        "'method'")
        if "value" in how:
            fills.append((path, "value", compile_node(how["value"], env.scope)))
            continue
        method = how["method"]
        if method not in ("locf", "linear"):
            raise _fail(f"Method must be either locf or linear, found {bson_repr(method)}")
        if method == "linear" and (sort is None or len(sort.fields) != 1):
            raise _fail("'linear' $fill requires a sortBy with exactly one field")
        field_expr = "$" + name
        builder = _locf_output if method == "locf" else _linear_fill_output
        fills.append((path, method, builder(field_expr, env)))
    return _fill_stage(partition, sort, fills)


def _fill_stage(partition: Any, sort: Any, fills: list) -> StageFn:
    def run(docs: Iterator[dict], rt: Runtime) -> Iterator[dict]:
        vars = rt.vars
        rows = []
        for i, d in enumerate(docs):
            pk = encode_value(_none(partition(d, vars))) if partition is not None else b""
            rows.append((pk, sort.key(d) if sort else b"", i, d))
        if sort is not None or partition is not None:
            rows.sort(key=lambda r: (r[0], r[1], r[2]))
        for part in _partitions(rows):
            keys = [_first_sort_value(d, sort) for d in part]
            yield from _fill_partition(part, keys, fills, vars)
    return run


def _fill_partition(part: list, keys: list, fills: list, vars: Any) -> Iterator[dict]:
    columns = []
    for _path, kind, fn in fills:
        columns.append(None if kind == "value" else fn(part, keys, vars))
    for i, d in enumerate(part):
        out = d
        for (path, kind, fn), col in zip(fills, columns):
            if not nullish(get_doc_path(out, path)):
                continue
            v = fn(d, vars) if kind == "value" else col[i]
            if v is not None and v is not MISSING:
                out = set_doc_path(out, path, v)
        yield out


def _none(v: Any) -> Any:
    return None if v is MISSING else v


def _first_sort_value(doc: dict, sort: Any) -> Any:
    if sort is None:
        return None
    return _none(get_doc_path(doc, sort.paths[0]))


# ---- $densify ----------------------------------------------------------------------------------


@stage("$densify")
def parse_densify(spec: Any, env: Env) -> StageFn:
    if not isinstance(spec, dict):
        raise _fail("the $densify stage specification must be an object")
    reject_unknown_fields("$densify", spec, ("field", "partitionByFields", "range"))
    if type(spec.get("field")) is not str or not isinstance(spec.get("range"), dict):
        raise CommandError(ErrorCode.IDLFailedToParse, "$densify requires 'field' and 'range'")
    path = validate_path(spec["field"])
    rng = spec["range"]
    step, unit, bounds = rng.get("step"), rng.get("unit"), rng.get("bounds")
    if num_kind(step) < 0 or to_double(step) <= 0:
        raise CommandError(ErrorCode.DensifyStepNotPositive,
                           "the step parameter in a range statement must be a strictly "
                           "positive numeric value")
    if not (bounds in ("full", "partition") or type(bounds) is list and len(bounds) == 2):
        raise CommandError(ErrorCode.DensifyBoundsInvalid,
                           "the bounds in a range statement must be the string 'full', "
                           "'partition', or an ascending array of two numbers or two "
                           f"dates, found {bson_repr(bounds)}")
    fields = spec.get("partitionByFields", [])
    if bounds == "partition" and not fields:
        raise CommandError(ErrorCode.DensifyPartitionWithoutFields,
                           "one may not specify the bounds as 'partition' without "
                           "specifying a non-empty array of partitionByFields")
    parts = [validate_path(f) for f in fields]
    return _densify_stage(path, step, unit, bounds, parts)


def _step(v: Any, step: Any, unit: str | None) -> Any:
    if unit is None:
        from ginkgodb.query.expr.ops_arith import add_values
        return add_values([v, step])
    from ginkgodb.query.expr.dates import UTC, from_millis
    from ginkgodb.query.expr.ops_date import add_to_date
    return from_millis(add_to_date(date_millis(v), unit, int(to_double(step)), UTC))


def _densify_stage(path: list[str], step: Any, unit: str | None, bounds: Any,
                   parts: list[list[str]]) -> StageFn:
    def run(docs: Iterator[dict], rt: Runtime) -> Iterator[dict]:
        rows, others = [], []
        for d in docs:
            v = get_doc_path(d, path)
            if nullish(v):
                others.append(d)
                continue
            pk = tuple(encode_value(_none(get_doc_path(d, p))) for p in parts)
            rows.append((pk, v, d))
        rows.sort(key=lambda r: (r[0], encode_value(r[1])))
        if bounds == "full" or type(bounds) is list:
            lo_all = bounds[0] if type(bounds) is list else (rows[0][1] if rows else None)
            hi_all = bounds[1] if type(bounds) is list else (max((r[1] for r in rows),
                                                                  key=encode_value)
                                                              if rows else None)
        start = 0
        while start < len(rows):
            end = start
            while end < len(rows) and rows[end][0] == rows[start][0]:
                end += 1
            group = rows[start:end]
            template = {}
            for p in parts:
                pv = get_doc_path(group[0][2], p)
                if pv is not MISSING:
                    template = set_doc_path(template, p, pv)
            if bounds == "partition":
                lo, hi = group[0][1], group[-1][1]
            else:
                lo, hi = lo_all, hi_all
            yield from _densify_partition(group, template, path, lo, hi, step, unit,
                                          explicit=type(bounds) is list)
            start = end
        yield from others
    return run


def _densify_partition(group: list, template: dict, path: list[str], lo: Any, hi: Any, step: Any,
                       unit: str | None, explicit: bool) -> Iterator[dict]:
    existing = [r[1] for r in group]
    cur = lo
    i = 0
    while cur is not None and (compare(cur, hi) < 0 or (not explicit and compare(cur, hi) <= 0)):
        while i < len(existing) and compare(existing[i], cur) < 0:
            yield group[i][2]
            i += 1
        if i < len(existing) and compare(existing[i], cur) == 0:
            yield group[i][2]
            i += 1
        else:
            yield set_doc_path(template, path, cur)
        cur = _step(cur, step, unit)
    while i < len(existing):
        yield group[i][2]
        i += 1

