"""$group, and the stages defined in terms of it: $sortByCount, $bucket."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ginkgodb.errors import CommandError, ErrorCode
from ginkgodb.query.expr import MISSING
from ginkgodb.query.expr.compiler import Fn, compile_node
from ginkgodb.query.expr.values import hash_key

from .accumulators import parse_accumulator
from .core import Env, Runtime, StageFn, stage

AccField = tuple[str, Callable[[Any, Any], Any]]


def parse_group_fields(spec: dict, env: Env, stage_name: str = "$group"
                       ) -> list[AccField]:
    fields = []
    for name, value in spec.items():
        if name == "_id":
            continue
        if name.startswith("$"):
            raise CommandError(ErrorCode.GroupFieldNameIsOperator,
                               f"The field name '{name}' cannot be an operator name")
        if "." in name:
            raise CommandError(ErrorCode.GroupFieldNameContainsDot,
                               f"The field name '{name}' cannot contain '.'")
        if not isinstance(value, dict) or not value or not next(iter(value)).startswith("$"):
            raise CommandError(ErrorCode.GroupFieldNotAccumulator,
                               f"The field '{name}' must be an accumulator object")
        if len(value) != 1:
            raise CommandError(ErrorCode.GroupFieldMultipleAccumulators,
                               f"The field '{name}' must specify one accumulator")
        (op, arg), = value.items()
        fields.append((name, parse_accumulator(op, arg, env.scope)))
    return fields


_ENGINE_CODES = {ErrorCode.BadValue: ErrorCode.GroupDivideByZero,
                 ErrorCode.ModByZero: ErrorCode.GroupModByZero}


def run_group(docs: Iterator[dict], rt: Runtime, id_fn: Fn, fields: list[AccField]
              ) -> Iterator[dict]:
    """Group, reporting arithmetic faults with the codes mongod's group engine uses."""
    try:
        yield from _run_group(docs, rt, id_fn, fields)
    except CommandError as exc:
        code = _ENGINE_CODES.get(exc.code)
        if code is None or "by zero" not in exc.errmsg:
            raise
        raise CommandError(code, exc.errmsg) from None


def _run_group(docs: Iterator[dict], rt: Runtime, id_fn: Fn, fields: list[AccField]
               ) -> Iterator[dict]:
    vars = rt.vars
    groups: dict[Any, tuple] = {}
    ids: list = []
    all_states: list[list] = []
    get = groups.get
    field_path = getattr(id_fn, "field_path", None)
    simple_key = field_path is not None and "." not in field_path
    for doc in docs:
        if simple_key:
            gid = doc.get(field_path)
            t = type(gid)
            key = gid if t is str or t is int or t is None else hash_key(gid)
        else:
            gid = id_fn(doc, vars)
            if gid is MISSING:
                gid = None
            key = hash_key(gid)
        adds = get(key)
        if adds is None:
            if gid is MISSING:
                gid = None
            states = [make(gid, vars) for _, make in fields]
            ids.append(gid)
            all_states.append(states)
            adds = groups[key] = tuple(st.add for st in states)
        for add in adds:
            add(doc, vars)
    names = [name for name, _ in fields]
    for gid, states in zip(ids, all_states):
        out = {"_id": gid}
        for name, st in zip(names, states):
            out[name] = st.result()
        yield out


@stage("$group")
def parse_group(spec: Any, env: Env) -> StageFn:
    if not isinstance(spec, dict):
        raise CommandError(ErrorCode.GroupFieldsNotObject,
                           "a group's fields must be specified in an object")
    if "_id" not in spec:
        raise CommandError(ErrorCode.GroupMissingId, "a group specification must include an _id")
    id_spec = spec["_id"]
    if isinstance(id_spec, dict) and id_spec and not next(iter(id_spec)).startswith("$"):
        for value in id_spec.values():
            if isinstance(value, (bool, int, float)) or type(value).__name__ in ("Int64",
                                                                                 "Decimal128"):
                raise CommandError(ErrorCode.GroupIdInclusionStyle,
                                   "$group does not support inclusion-style expressions")
    id_fn = compile_node(id_spec, env.scope)
    fields = parse_group_fields(spec, env)
    return lambda docs, rt: run_group(docs, rt, id_fn, fields)


@stage("$sortByCount")
def parse_sort_by_count(spec: Any, env: Env) -> StageFn:
    is_path = isinstance(spec, str) and spec.startswith("$")
    is_expr = isinstance(spec, dict) and len(spec) == 1 and next(iter(spec)).startswith("$")
    if not (is_path or is_expr):
        raise CommandError(ErrorCode.SortByCountNotPathOrExpression if not isinstance(spec, dict)
                           else ErrorCode.SortByCountObjectNotExpression,
                           "the sortByCount field must be defined as a $-prefixed path or an "
                           "expression")
    id_fn = compile_node(spec, env.scope)
    fields = parse_group_fields({"count": {"$sum": 1}}, env)
    from ginkgodb.query.sort import compile_sort
    sort = compile_sort({"count": -1})

    def run(docs: Iterator[dict], rt: Runtime) -> Iterator[dict]:
        return iter(sort.sort(run_group(docs, rt, id_fn, fields)))
    return run

