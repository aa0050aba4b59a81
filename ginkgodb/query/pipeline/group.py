"""$group, and the stages defined in terms of it: $sortByCount, $bucket."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ginkgodb.bsonutil.keycodec import encode_value
from ginkgodb.errors import CommandError, ErrorCode
from ginkgodb.query.expr import MISSING
from ginkgodb.query.expr.compiler import Fn, compile_node
from ginkgodb.query.expr.memory import approximate_size
from ginkgodb.query.expr.values import hash_key
from ginkgodb.query.external_sort import SortBuffer
from ginkgodb.query.knobs import KNOBS
from ginkgodb.query.operation import checked

from .accumulators import parse_accumulator
from .core import Env, Runtime, StageFn, stage
from .doc_size import DocSizer

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


class Meter:
    """Bytes the accumulators of one $group hold beyond their fixed size ($push, $addToSet...)."""

    __slots__ = ("used",)

    def __init__(self) -> None:
        self.used = 0


#: a group's own bookkeeping beyond its key and accumulators (dict entry, lists, tuple)
_GROUP_OVERHEAD = 96


def group_exceeded() -> CommandError:
    return CommandError(ErrorCode.QueryExceededMemoryLimitNoDiskUseAllowed,
                        "Exceeded memory limit for $group, but didn't allow external sort. Pass "
                        "allowDiskUse:true to opt in.")


def _run_group(docs: Iterator[dict], rt: Runtime, id_fn: Fn, fields: list[AccField]
               ) -> Iterator[dict]:
    """Groups in memory up to internalDocumentSourceGroupMaxMemoryBytes. Past it, without
    allowDiskUse, 292; with it, the groups built so far stay as they are (in half the limit)
    and every later document goes, keyed by its group, to an external sort (the other half);
    reading that back in key order continues each group exactly where the in-memory pass left
    it, so the results are those of an in-memory $group (emitted in another order)."""
    vars = rt.vars
    spill = rt.ctx.spill
    limit = KNOBS.group_max_memory_bytes
    threshold = limit // 2 if spill.allowed else limit
    meter = Meter()
    fixed = 0
    groups: dict[Any, tuple] = {}
    index: dict[Any, int] = {}
    ids: list = []
    all_states: list[list] = []
    get = groups.get
    field_path = getattr(id_fn, "field_path", None)
    simple_key = field_path is not None and "." not in field_path
    docs = iter(docs)
    spilled: SortBuffer | None = None
    for doc in checked(docs):
        gid, key = _group_of(doc, vars, id_fn, field_path, simple_key)
        adds = get(key)
        if adds is None:
            states = _new_states(fields, gid, vars, meter)
            index[key] = len(ids)
            ids.append(gid)
            all_states.append(states)
            adds = groups[key] = tuple(st.add for st in states)
            fixed += approximate_size(gid) + _GROUP_OVERHEAD + 16 * len(states)
        for add in adds:
            add(doc, vars)
        if fixed + meter.used > threshold:
            if not spill.allowed:
                raise group_exceeded()
            spilled = _spill_rest(docs, vars, id_fn, field_path, simple_key, spill, limit - threshold)
            break
    names = [name for name, _ in fields]
    done: set[int] = set()
    if spilled is not None:
        yield from _merge_spilled(spilled, fields, names, vars, index, ids, all_states, done, meter)
    for i, (gid, states) in enumerate(zip(ids, all_states)):
        if i not in done:
            yield _output(gid, names, states)


def _group_of(doc: dict, vars: Any, id_fn: Fn, field_path: Any, simple_key: bool) -> tuple[Any, Any]:
    """(the group's _id value, its hashable key)."""
    if simple_key:
        gid = doc.get(field_path)
        t = type(gid)
        return gid, (gid if t is str or t is int or t is None else hash_key(gid))
    gid = id_fn(doc, vars)
    if gid is MISSING:
        gid = None
    return gid, hash_key(gid)


def _new_states(fields: list[AccField], gid: Any, vars: Any, meter: Meter) -> list:
    if gid is MISSING:
        gid = None
    states = [make(gid, vars) for _, make in fields]
    for st in states:
        if hasattr(st, "meter"):
            st.meter = meter
    return states


def _output(gid: Any, names: list[str], states: list) -> dict:
    out = {"_id": gid}
    for name, st in zip(names, states):
        out[name] = st.result()
    return out


def _spill_rest(docs: Iterator[dict], vars: Any, id_fn: Fn, field_path: Any, simple_key: bool,
                spill: Any, limit: int) -> SortBuffer:
    """The remaining documents in an external sort keyed by their group's key-codec bytes."""
    buffer = SortBuffer(limit, spill, group_exceeded)
    size_of = DocSizer()
    for doc in checked(docs):
        gid, _ = _group_of(doc, vars, id_fn, field_path, simple_key)
        buffer.add(encode_value(gid), (gid, doc), size_of(doc))
    return buffer


def _merge_spilled(buffer: SortBuffer, fields: list[AccField], names: list[str], vars: Any,
                   index: dict, ids: list, all_states: list, done: set, meter: Meter) -> Iterator[dict]:
    """Each group's later documents arrive together and in arrival order: a group the
    in-memory pass began continues from its states, a new one starts. (Key-codec bytes order
    the groups; the in-memory key decides which documents share one.)"""
    run_key: bytes | None = None
    run: dict[Any, tuple] = {}
    try:
        for codec_key, (gid, doc) in buffer:
            if codec_key != run_key:
                yield from (_output(g, names, states) for g, states, _ in run.values())
                run_key, run = codec_key, {}
            key = hash_key(gid)
            entry = run.get(key)
            if entry is None:
                i = index.get(key)
                if i is not None:
                    done.add(i)
                    states = all_states[i]
                    entry = (ids[i], states, tuple(st.add for st in states))
                else:
                    states = _new_states(fields, gid, vars, meter)
                    entry = (gid, states, tuple(st.add for st in states))
                run[key] = entry
            for add in entry[2]:
                add(doc, vars)
        yield from (_output(g, names, states) for g, states, _ in run.values())
    finally:
        buffer.close()


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

