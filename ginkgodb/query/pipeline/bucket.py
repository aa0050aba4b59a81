"""$bucket (fixed boundaries) and $bucketAuto (even buckets over the sorted values)."""
from __future__ import annotations

import bisect
import functools
from collections.abc import Iterator
from typing import Any

from ginkgodb.bsonutil.compare import compare
from ginkgodb.bsonutil.types import bracket
from ginkgodb.errors import CommandError, ErrorCode
from ginkgodb.query.expr import MISSING
from ginkgodb.query.expr.compiler import compile_node
from ginkgodb.query.expr.values import as_int32, bson_repr, num_kind, type_name

from .core import Env, Runtime, StageFn, stage
from .group import parse_group_fields

_DEFAULT_OUTPUT = {"count": {"$sum": 1}}


def _group_by(spec: dict, stage_name: str, code: ErrorCode) -> Any:
    g = spec["groupBy"]
    ok = (isinstance(g, str) and g.startswith("$")) or \
        (isinstance(g, dict) and len(g) == 1 and next(iter(g)).startswith("$"))
    if not ok:
        raise CommandError(code, f"The {stage_name} 'groupBy' field must be defined as a "
                                 f"$-prefixed path or an expression, but found: {bson_repr(g)}.")
    return g


def _check_boundaries(bounds: Any) -> list:
    if not isinstance(bounds, list):
        raise CommandError(ErrorCode.BucketBoundariesNotArray,
                           "The $bucket 'boundaries' field must be an array, but found "
                           f"type: {type_name(bounds)}.")
    if len(bounds) < 2:
        raise CommandError(ErrorCode.BucketTooFewBoundaries,
                           "The $bucket 'boundaries' field must have at least 2 values, "
                           f"but found {len(bounds)} value(s).")
    for v in bounds:
        if isinstance(v, (dict, str)) and isinstance(v, str) and v.startswith("$") or \
                isinstance(v, dict) and v and next(iter(v)).startswith("$"):
            raise CommandError(ErrorCode.BucketBoundaryNotConstant,
                               "The $bucket 'boundaries' field must be an array of "
                               "constant values, but found value: " + bson_repr(v) + ".")
    for i in range(1, len(bounds)):
        a, b = bounds[i - 1], bounds[i]
        if bracket(a) != bracket(b):
            raise CommandError(ErrorCode.BucketBoundariesMixedTypes,
                               "All values in the the 'boundaries' option to $bucket "
                               f"must have the same type. Found conflicting types "
                               f"{type_name(a)} and {type_name(b)}.")
        if compare(a, b) >= 0:
            raise CommandError(ErrorCode.BucketBoundariesUnsorted,
                               "The 'boundaries' option to $bucket must be sorted in "
                               f"ascending order, but elements {i - 1} and {i} are not in "
                               f"ascending order ({bson_repr(a)} is not less than "
                               f"{bson_repr(b)}).")
    return bounds


@stage("$bucket")
def parse_bucket(spec: Any, env: Env) -> StageFn:
    if not isinstance(spec, dict):
        raise CommandError(ErrorCode.BucketSpecNotObject,
                           "Argument to $bucket stage must be an object, but found type: "
                           f"{type_name(spec)}.")
    for key in spec:
        if key not in ("groupBy", "boundaries", "default", "output"):
            raise CommandError(ErrorCode.BucketUnknownOption,
                               f"Unrecognized option to $bucket: {key}.")
    if "groupBy" not in spec or "boundaries" not in spec:
        raise CommandError(ErrorCode.BucketMissingGroupByOrBoundaries,
                           "$bucket requires 'groupBy' and 'boundaries' to be specified.")
    group_by = compile_node(_group_by(spec, "$bucket", ErrorCode.BucketGroupByNotPathOrExpression),
                            env.scope)
    bounds = _check_boundaries(spec["boundaries"])
    has_default = "default" in spec
    default = spec.get("default")
    if has_default and compare(bounds[0], default) <= 0 and compare(default, bounds[-1]) < 0:
        raise CommandError(ErrorCode.BucketDefaultWithinBoundaries,
                           "The $bucket 'default' field must be less than the lowest "
                           "boundary or greater than or equal to the highest boundary.")
    output = spec.get("output", _DEFAULT_OUTPUT)
    if not isinstance(output, dict):
        raise CommandError(ErrorCode.BucketOutputNotObject,
                           "The $bucket 'output' field must be an object, but found "
                           f"type: {type_name(output)}.")
    if "_id" in output:
        raise CommandError(ErrorCode.GroupIdSpecifiedTwice,
                           "a group's _id may only be specified once")
    fields = parse_group_fields(output, env, "$bucket")
    key = functools.cmp_to_key(compare)
    bound_keys = [key(b) for b in bounds]

    def which(v: Any) -> Any:
        if v is MISSING:
            v = None
        if compare(v, bounds[0]) >= 0 and compare(v, bounds[-1]) < 0:
            i = bisect.bisect_right(bound_keys, key(v)) - 1
            return bounds[i]
        if not has_default:
            raise CommandError(ErrorCode.BucketNoMatchingBranch,
                               "$switch could not find a matching branch for an input, "
                               "and no default was specified.")
        return default

    def run(docs: Iterator[dict], rt: Runtime) -> Iterator[dict]:
        vars = rt.vars
        buckets: dict[int, list] = {}
        for doc in docs:
            b = which(group_by(doc, vars))
            ident = id(b)
            entry = buckets.get(ident)
            if entry is None:
                entry = buckets[ident] = [b] + [make(b, vars) for _, make in fields]
            for i in range(1, len(entry)):
                entry[i].add(doc, vars)
        ordered = sorted(buckets.values(), key=lambda e: key(e[0]))
        for entry in ordered:
            out = {"_id": entry[0]}
            for i, (name, _) in enumerate(fields, 1):
                out[name] = entry[i].result()
            yield out
    return run


# ---- $bucketAuto ----------------------------------------------------------------------------


@stage("$bucketAuto")
def parse_bucket_auto(spec: Any, env: Env) -> StageFn:
    if not isinstance(spec, dict):
        raise CommandError(ErrorCode.BucketAutoSpecNotObject,
                           "The argument to $bucketAuto must be an object, but found "
                           f"type: {type_name(spec)}.")
    for key in spec:
        if key not in ("groupBy", "buckets", "output", "granularity"):
            raise CommandError(ErrorCode.BucketAutoUnknownOption,
                               f"Unrecognized option to $bucketAuto: {key}.")
    if "groupBy" not in spec or "buckets" not in spec:
        raise CommandError(ErrorCode.BucketAutoMissingGroupByOrBuckets,
                           "$bucketAuto requires 'groupBy' and 'buckets' to be "
                           "specified")
    group_by = compile_node(_group_by(spec, "$bucketAuto",
                                      ErrorCode.BucketAutoGroupByNotPathOrExpression), env.scope)
    n = spec["buckets"]
    if num_kind(n) < 0 or isinstance(n, bool):
        raise CommandError(ErrorCode.BucketAutoBucketsNotNumeric,
                           "The $bucketAuto 'buckets' field must be a numeric value, but "
                           f"found type: {type_name(n)}.")
    count = as_int32(n)
    if count is None:
        raise CommandError(ErrorCode.BucketAutoBucketsNotInt32,
                           "The $bucketAuto 'buckets' field must be representable as a "
                           f"32-bit integer, but found {bson_repr(n)}.")
    if count <= 0:
        raise CommandError(ErrorCode.BucketAutoBucketsNotPositive,
                           "The $bucketAuto 'buckets' field must be greater than 0, but "
                           f"found: {count}.")
    output = spec.get("output") or _DEFAULT_OUTPUT
    if not isinstance(output, dict):
        raise CommandError(ErrorCode.BucketAutoOutputNotObject,
                           "The $bucketAuto 'output' field must be an object, but found "
                           f"type: {type_name(output)}.")
    if "granularity" in spec:
        from .granularity import rounder
        round_up = rounder(spec["granularity"])
    else:
        round_up = None
    fields = parse_group_fields(output, env, "$bucketAuto")
    return _bucket_auto(group_by, count, fields, round_up)


def _bucket_auto(group_by: Any, count: int, fields: list, round_up: Any) -> StageFn:
    key = functools.cmp_to_key(compare)

    def run(docs: Iterator[dict], rt: Runtime) -> Iterator[dict]:
        vars = rt.vars
        pairs = []
        for doc in docs:
            v = group_by(doc, vars)
            pairs.append((None if v is MISSING else v, doc))
        if round_up is not None:
            for v, _ in pairs:
                round_up.check(v)
        pairs.sort(key=lambda p: key(p[0]))
        buckets = _fill(pairs, count, round_up)
        for i, (lo, hi, members) in enumerate(buckets):
            if i + 1 < len(buckets) and round_up is None:
                hi = buckets[i + 1][0]
            states = [make(None, vars) for _, make in fields]
            for doc in members:
                for s in states:
                    s.add(doc, vars)
            out: dict = {"_id": {"min": lo, "max": hi}}
            for (name, _), s in zip(fields, states):
                out[name] = s.result()
            yield out
    return run


def _fill(pairs: list, count: int, round_up: Any) -> list[tuple[Any, Any, list]]:
    n = len(pairs)
    size = max(1, int(n / count + 0.5)) if n else 1
    buckets: list[tuple[Any, Any, list]] = []
    i = 0
    for b in range(count):
        if i >= n:
            break
        start = i
        if b == count - 1:
            i = n
        else:
            i = min(n, i + size)
            while i < n and compare(pairs[i][0], pairs[i - 1][0]) == 0:
                i += 1
        members = pairs[start:i]
        lo, hi = members[0][0], members[-1][0]
        if round_up is not None:
            lo = buckets[-1][1] if buckets else round_up.down(lo)
            hi = round_up.up(hi)
            while i < n and compare(pairs[i][0], hi) < 0:
                members.append(pairs[i])
                i += 1
        buckets.append((lo, hi, [d for _, d in members]))
    return buckets
