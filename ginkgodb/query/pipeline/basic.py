"""Row-at-a-time stages: $match, $project, $addFields/$set, $unset, $replaceRoot/$replaceWith,
$redact, $documents, and the counting/paging stages $skip, $limit, $count, $sample."""
from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from bson.decimal128 import Decimal128
from bson.int64 import Int64

from ginkgodb.errors import CommandError, ErrorCode
from ginkgodb.query.expr import MISSING
from ginkgodb.query.expr.compiler import compile_node, reject_unknown_fields
from ginkgodb.query.expr.values import bson_repr, type_name
from ginkgodb.query.projection import compile_projection
from ginkgodb.query.projection.apply import add_computed
from ginkgodb.query.projection.tree import Computed

from .core import Env, Runtime, StageFn, stage
from .fields import validate_path
from .setfields import compile_set_fields


@stage("$match")
def parse_match(spec: Any, env: Env) -> StageFn:
    if not isinstance(spec, dict):
        raise CommandError(ErrorCode.MatchFilterNotObject,
                           "the match filter must be an expression in an object")
    from ginkgodb.query.match import compile_filter
    _check_match_operators(spec, env.position == 0)
    rest = {k: v for k, v in spec.items() if k != "$expr"}
    if "$expr" in repr(rest):
        def run_recompiled(docs: Iterator[dict], rt: Runtime) -> Iterator[dict]:
            return filter(compile_filter(spec, variables=rt.vars).match, docs)
        compile_filter(spec, variables=env.ctx.variables)
        return run_recompiled
    match = compile_filter(rest, variables=env.ctx.variables).match if rest or \
        "$expr" not in spec else None
    if "$expr" not in spec:
        return lambda docs, rt: filter(match, docs)
    from ginkgodb.query.expr import truthy
    expr = compile_node(spec["$expr"], env.scope)

    def run(docs: Iterator[dict], rt: Runtime) -> Iterator[dict]:
        vars = rt.vars
        for doc in docs:
            if truthy(expr(doc, vars)) and (match is None or match(doc)):
                yield doc
    return run


def _check_match_operators(spec: Any, first: bool) -> None:
    """Operators $match refuses that a find filter accepts."""
    if isinstance(spec, dict):
        for key, value in spec.items():
            if key == "$where":
                raise CommandError(ErrorCode.BadValue, "$where is not allowed inside of a $match "
                                                       "aggregation expression")
            if key in ("$near", "$nearSphere", "$geoNear"):
                raise CommandError(ErrorCode.GeoNearNotAllowedHere,
                                   "$geoNear, $near, and $nearSphere are not allowed in "
                                   "this context, as these operators require sorting "
                                   "geospatial data. If you do not need sort, consider "
                                   "using $geoWithin instead.")
            if key == "$text" and not first:
                raise CommandError(ErrorCode.MatchTextNotFirstStage,
                                   "$match with $text is only allowed as the first "
                                   "pipeline stage")
            if key != "$expr":
                _check_match_operators(value, first)
    elif isinstance(spec, list):
        for item in spec:
            _check_match_operators(item, first)


@stage("$project")
def parse_project(spec: Any, env: Env) -> StageFn:
    if not isinstance(spec, dict):
        raise CommandError(ErrorCode.ProjectSpecNotObject,
                           "$project specification must be an object")
    proj = compile_projection(spec, for_aggregation=True,
                              known_vars=env.scope.names if not env.scope.open else None)
    apply = proj.apply

    def run(docs: Iterator[dict], rt: Runtime) -> Iterator[dict]:
        vars = rt.vars
        for doc in docs:
            yield apply(doc, variables=vars)
    return run


@stage("$addFields", "$set")
def parse_add_fields(spec: Any, env: Env) -> StageFn:
    root = compile_set_fields(spec, env.scope, "$addFields")
    flat = [(name, e.fn) for name, e in root.entries.items() if type(e) is Computed]
    if len(flat) == len(root.entries):
        def run_flat(docs: Iterator[dict], rt: Runtime) -> Iterator[dict]:
            vars = rt.vars
            for doc in docs:
                out = dict(doc)
                for name, fn in flat:
                    v = fn(doc, vars)
                    if v is MISSING:
                        out.pop(name, None)
                    else:
                        out[name] = v
                yield out
        return run_flat

    def run(docs: Iterator[dict], rt: Runtime) -> Iterator[dict]:
        vars = rt.vars
        for doc in docs:
            out = dict(doc)
            add_computed(root, out, doc, doc, vars)
            yield out
    return run


@stage("$unset")
def parse_unset(spec: Any, env: Env) -> StageFn:
    if type(spec) is str:
        names = [spec]
    elif isinstance(spec, list):
        if not spec:
            raise CommandError(ErrorCode.UnsetSpecEmptyArray,
                               "$unset specification must be a string or an array with at "
                               "least one field")
        if not all(type(s) is str for s in spec):
            raise CommandError(ErrorCode.UnsetSpecNonString,
                               "$unset specification must be a string or an array "
                               "containing only string values")
        names = spec
    else:
        raise CommandError(ErrorCode.UnsetSpecNotStringOrArray,
                           "$unset specification must be a string or an array")
    for name in names:
        validate_path(name)
    ordered = sorted(names)
    for a, b in zip(ordered, ordered[1:]):
        if a == b or b.startswith(a + "."):
            raise CommandError(ErrorCode.ProjectionPathCollision,
                               f"Invalid $unset :: caused by :: Path collision at {b}")
    proj = compile_projection({name: 0 for name in names}, for_aggregation=True)
    apply = proj.apply
    return lambda docs, rt: (apply(d) for d in docs)


# ---- $replaceRoot / $replaceWith --------------------------------------------------------------


def _replace(fn: Any, what: str) -> StageFn:
    def run(docs: Iterator[dict], rt: Runtime) -> Iterator[dict]:
        vars = rt.vars
        for doc in docs:
            v = fn(doc, vars)
            if not isinstance(v, dict):
                raise CommandError(ErrorCode.ReplaceRootNewRootNotObject,
                                   f"'{what}' must evaluate to an object, but resulting "
                                   f"value was: {bson_repr(v)}. Type of resulting value: "
                                   f"'{type_name(v)}'. Input document: {bson_repr(doc)}")
            yield v
    return run


@stage("$replaceRoot")
def parse_replace_root(spec: Any, env: Env) -> StageFn:
    if not isinstance(spec, dict):
        raise CommandError(ErrorCode.ReplaceRootSpecNotObject,
                           "expected an object as specification for $replaceRoot stage, "
                           f"got {type_name(spec)}")
    reject_unknown_fields("$replaceRoot", spec, ("newRoot",))
    if "newRoot" not in spec:
        raise CommandError(ErrorCode.IDLFailedToParse, "BSON field '$replaceRoot.newRoot' is "
                                                       "missing but a required field")
    return _replace(compile_node(spec["newRoot"], env.scope), "newRoot")


@stage("$replaceWith")
def parse_replace_with(spec: Any, env: Env) -> StageFn:
    return _replace(compile_node(spec, env.scope), "newRoot")


# ---- $redact --------------------------------------------------------------------------------

_KEEP, _PRUNE, _DESCEND = "keep", "prune", "descend"
_REDACT_VARS = {"KEEP": _KEEP, "PRUNE": _PRUNE, "DESCEND": _DESCEND}


@stage("$redact")
def parse_redact(spec: Any, env: Env) -> StageFn:
    fn = compile_node(spec, env.scope.bind("KEEP", "PRUNE", "DESCEND"))

    def redact(doc: dict, vars: dict) -> dict | None:
        action = fn(doc, vars)
        if action == _KEEP and type(action) is str:
            return doc
        if action == _PRUNE and type(action) is str:
            return None
        if action != _DESCEND or type(action) is not str:
            raise CommandError(ErrorCode.RedactBadResult,
                               "$redact's expression should not return anything aside "
                               "from the variables $$KEEP, $$DESCEND, and $$PRUNE, but "
                               f"returned {bson_repr(action)}")
        out = {}
        for k, v in doc.items():
            if isinstance(v, dict):
                r = redact(v, vars)
                if r is not None:
                    out[k] = r
            elif type(v) is list:
                out[k] = _redact_array(v, vars)
            else:
                out[k] = v
        return out

    def _redact_array(arr: list, vars: dict) -> list:
        out = []
        for e in arr:
            if isinstance(e, dict):
                r = redact(e, vars)
                if r is not None:
                    out.append(r)
            elif type(e) is list:
                out.append(_redact_array(e, vars))
            else:
                out.append(e)
        return out

    def run(docs: Iterator[dict], rt: Runtime) -> Iterator[dict]:
        base = {**rt.vars, **_REDACT_VARS}
        for doc in docs:
            r = redact(doc, {**base, "ROOT": doc})
            if r is not None:
                yield r
    return run


# ---- $documents -------------------------------------------------------------------------------


@stage("$documents")
def parse_documents(spec: Any, env: Env) -> StageFn:
    fn = compile_node(spec, env.scope)

    def run(docs: Iterator[dict], rt: Runtime) -> Iterator[dict]:
        value = fn({}, rt.vars)
        if type(value) is not list or not all(isinstance(d, dict) for d in value):
            raise CommandError(ErrorCode.DocumentsNotArrayOfObjects,
                               "error during lookup: $documents stage must evaluate to "
                               "an array of objects")
        return iter(value)
    return run


# ---- $skip / $limit / $count / $sample ------------------------------------------------------


def _integral_arg(name: str, value: Any, type_code: ErrorCode) -> int:
    if isinstance(value, bool) or type(value) not in (int, float, Int64, Decimal128):
        raise CommandError(type_code, f"invalid argument to {name} stage: Expected a number in: "
                                      f"{name}: {bson_repr(value)}")
    number = value.to_decimal() if type(value) is Decimal128 else value
    try:
        as_int = int(number)
    except (ValueError, OverflowError):
        as_int = None
    if as_int is None or as_int != number or not -2**63 <= as_int < 2**63:
        raise CommandError(type_code, f"invalid argument to {name} stage: Expected an integer: "
                                      f"{name}: {bson_repr(value)}")
    return as_int


@stage("$skip")
def parse_skip(spec: Any, env: Env) -> StageFn:
    n = _integral_arg("$skip", spec, ErrorCode.SkipNotNonNegativeInteger)
    if n < 0:
        raise CommandError(ErrorCode.SkipNotNonNegativeInteger,
                           f"invalid argument to $skip stage: Expected a non-negative "
                           f"number in: $skip: {n}")

    def run(docs: Iterator[dict], rt: Runtime) -> Iterator[dict]:
        for _ in range(n):
            if next(docs, None) is None:
                return iter(())
        return docs
    run.skip = n  # type: ignore[attr-defined]
    return run


@stage("$limit")
def parse_limit(spec: Any, env: Env) -> StageFn:
    n = _integral_arg("$limit", spec, ErrorCode.LimitNotNonNegativeInteger)
    if n == 0:
        raise CommandError(ErrorCode.LimitNotPositive, "the limit must be positive")
    if n < 0:
        raise CommandError(ErrorCode.LimitNotNonNegativeInteger,
                           "invalid argument to $limit stage: Expected a non-negative "
                           f"number in: $limit: {n}")
    import itertools

    def run(docs: Iterator[dict], rt: Runtime) -> Iterator[dict]:
        return itertools.islice(docs, n)
    run.limit = n  # type: ignore[attr-defined]
    return run


@stage("$count")
def parse_count(spec: Any, env: Env) -> StageFn:
    if type(spec) is not str:
        raise CommandError(ErrorCode.CountFieldNotString,
                           "the count field must be a non-empty string")
    if not spec:
        raise CommandError(ErrorCode.CountFieldEmpty, "the count field must be a non-empty string")
    if spec.startswith("$"):
        raise CommandError(ErrorCode.CountFieldDollarPrefixed,
                           "the count field cannot be a $-prefixed path")
    if "\0" in spec:
        raise CommandError(ErrorCode.CountFieldContainsNull,
                           "the count field cannot contain a null byte")
    if "." in spec:
        raise CommandError(ErrorCode.CountFieldContainsDot, "the count field cannot contain '.'")
    if spec == "_id":
        raise CommandError(ErrorCode.CountFieldIsId, "the count field cannot be '_id'")

    def run(docs: Iterator[dict], rt: Runtime) -> Iterator[dict]:
        n = sum(1 for _ in docs)
        if n:
            yield {spec: n if n < 2**31 else Int64(n)}
    return run


def _sample_size(value: Any) -> int:
    """The size rounded half-to-even; it must come out positive (infinity means all)."""
    import decimal
    if type(value) is float and value == value and abs(value) != float("inf"):
        value = int(value)
    d = value.to_decimal() if type(value) is Decimal128 else decimal.Decimal(value)
    if d.is_nan() or d <= 0:
        raise CommandError(ErrorCode.SampleSizeNotPositive,
                           "size argument to $sample must be a positive number")
    if d.is_infinite():
        return 2**63 - 1
    size = int(d.to_integral_value(decimal.ROUND_HALF_EVEN))
    if size <= 0:
        raise CommandError(ErrorCode.SampleSizeNotPositive,
                           "size argument to $sample must be a positive number")
    return size


@stage("$sample")
def parse_sample(spec: Any, env: Env) -> StageFn:
    if not isinstance(spec, dict):
        raise CommandError(ErrorCode.SampleSpecNotObject,
                           "the $sample stage specification must be an object")
    size = None
    for key in spec:
        if key != "size":
            raise CommandError(ErrorCode.SampleUnknownOption,
                               f"unrecognized option to $sample: {key}")
    for _key, value in spec.items():
        if isinstance(value, bool) or type(value) not in (int, float, Int64, Decimal128):
            raise CommandError(ErrorCode.SampleSizeNotNumber,
                               "size argument to $sample must be a number")
        size = _sample_size(value)
    if size is None:
        raise CommandError(ErrorCode.SampleMissingSize, "$sample stage must specify a size")

    def run(docs: Iterator[dict], rt: Runtime) -> Iterator[dict]:
        reservoir: list[dict] = []
        for i, doc in enumerate(docs):
            if i < size:
                reservoir.append(doc)
            else:
                j = random.randint(0, i)
                if j < size:
                    reservoir[j] = doc
        random.shuffle(reservoir)
        return iter(reservoir)
    return run

