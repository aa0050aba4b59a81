"""insert, update, delete and findAndModify: each statement atomic per document, batches ordered or not.

A write command runs in one storage transaction under the engine lock. An ordered batch stops at
its first failing statement and keeps what came before; an unordered batch records each failure and
goes on. The target documents of an update/delete are read inside the writer's own transaction, so
read-modify-write (`$inc`, findAndModify) is atomic against other writers.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Optional

import bson
from bson.raw_bson import RawBSONDocument

from ..bsonutil.sentinels import ABSENT
from ..errors import CommandError, ErrorCode
from ..planner.choose import IndexPlan, QueryPlan
from ..planner.fast import fast_plan
from ..planner.parsed_query import ParsedQuery, id_point_key
from ..query.operation import checked
from ..query.update import compile_update
from . import plan_builder as Q
from . import plan_stages as S
from . import record_format
from .ddl import ensure_collection
from .documents import prepare_insert
from .names import check_writable
from .no_wait import UnboundedPlan, waits_refused
from .records import delete_record, insert_record, update_record
from .timeseries.options import timeseries_options
from .validation import check_document
from .views import refuse_write


@dataclass
class WriteOutcome:
    n: int = 0
    n_modified: int = 0
    upserted: list = field(default_factory=list)   # [{index, _id}]
    errors: list = field(default_factory=list)     # writeErrors entries
    statements: list = field(default_factory=list)  # StatementStats of the update/delete statements that ran


class StatementStats:
    """One update or delete statement, as the profiler reports it (the plan's numbers are read
    when the statement ends; only the small QueryPlan is kept, for its planSummary)."""

    __slots__ = ("index", "n", "modified", "upserted", "keys_examined", "docs_examined", "_plan")

    def __init__(self, index: int, n: int, modified: int = 0, upserted: bool = False, built: Any = None) -> None:
        self.index, self.n, self.modified, self.upserted = index, n, modified, upserted
        self.keys_examined = built.keys_examined if built is not None else 0
        self.docs_examined = built.docs_examined if built is not None else 0
        self._plan = built.plan if built is not None else None

    @property
    def plan_summary(self) -> Optional[str]:
        return Q.plan_summary(self._plan) if self._plan is not None else None


def _run_batch(items: list, ordered: bool, run_one: Callable[[int, Any], None], out: WriteOutcome) -> None:
    for i, item in enumerate(items):
        try:
            run_one(i, item)
        except CommandError as exc:
            if "TransientTransactionError" in exc.labels or exc.code == ErrorCode.OperationNotSupportedInTransaction:
                raise  # a transaction's conflict or refusal fails the command, not one statement
            out.errors.append(exc.to_write_error(i))
            if ordered:
                return


class TimeSeriesTarget(Exception):
    """An insert met a time-series namespace in its batch's catalog: nothing was written; the
    caller inserts through the time-series path (`options`: the namespace's `timeseries`)."""

    def __init__(self, options: dict) -> None:
        super().__init__(options)
        self.options = options


def insert(engine, db: str, coll: str, docs: list, ordered: bool = True, validate=None, *,
           internal: bool = False, into: Optional[Callable[..., None]] = None,
           time_series_aside: bool = False) -> WriteOutcome:
    """`internal`: the server's own write (the profiler's) to a collection users may not write;
    `into`: what writes the statements in the batch (`insert_into`, or bulk_insert's);
    `time_series_aside`: raise TimeSeriesTarget for a time-series namespace (checked in the
    batch's own catalog, so no read of the published one comes first)."""
    if not internal:
        check_writable(db, coll)
    out = WriteOutcome()
    with engine.write() as batch:
        batch.result = out
        state = batch.collection(db, coll)
        if state is None:
            ensure_collection(batch, db, coll)
        else:
            if time_series_aside and "viewOn" in state.meta.options:
                ts = timeseries_options(state.meta)
                if ts is not None:
                    raise TimeSeriesTarget(ts)
            refuse_write(state)   # ensure_collection's check of an existing collection
        (into or insert_into)(engine, batch, db, coll, docs, ordered, validate, out)
    return out


def insert_into(engine, batch, db: str, coll: str, docs: list, ordered: bool, validate,
                out: WriteOutcome) -> None:
    """insert's statements, one document at a time, in `batch` (the collection exists)."""
    tick = engine.clock.tick

    def one(i: int, doc: Any) -> None:
        d, raw = prepare_insert(doc, now=tick)
        state = batch.collection(db, coll)  # a multikey change makes a new handle
        # check_document returns at once for a collection without a validator: not called then
        if validate is not None and (validate is not check_document or state.meta.options.get("validator")):
            validate(state, d, None)
        insert_record(batch, state, d, raw)
        out.n += 1

    _run_batch(docs, ordered, one, out)


class TimeSeriesNamespace(Exception):
    """The namespace a write names is a time-series collection's (its own module writes it):
    found in the write batch, before anything was written, so the caller leaves the batch and
    writes there. Found so, the catalog is read once per write (a fresh look at the shared
    catalog costs a storage snapshot)."""

    def __init__(self, options: dict) -> None:
        super().__init__("time-series namespace")
        self.options = options


def _checked_namespace(engine, db: str, coll: str, redirect: bool) -> None:
    """check_writable, with the time-series redirect first (as when the caller checked it
    before): only a failing check reads the catalog for it."""
    try:
        check_writable(db, coll)
    except CommandError:
        if redirect:
            _redirect_timeseries(engine.catalog.get(db, coll))
        raise


def _redirect_timeseries(meta) -> None:
    ts = timeseries_options(meta)
    if ts is not None:
        raise TimeSeriesNamespace(ts)


@dataclass
class UpdateStatement:
    q: dict
    u: Any
    upsert: bool = False
    multi: bool = False
    array_filters: Optional[list] = None
    hint: Any = None
    collation: Optional[dict] = None
    sort: Optional[dict] = None
    variables: Optional[dict] = None


def update(engine, db: str, coll: str, statements: list[UpdateStatement], ordered: bool = True,
           validate=None, *, timeseries: bool = False) -> WriteOutcome:
    """`timeseries`: raise TimeSeriesNamespace when the namespace is a time-series collection's."""
    _checked_namespace(engine, db, coll, timeseries)
    out = WriteOutcome()
    with engine.write() as batch:
        batch.result = out
        state = batch.collection(db, coll)
        if timeseries and state is not None:
            _redirect_timeseries(state.meta)
        refuse_write(state)  # a command error, before any statement

        def one(i: int, st: UpdateStatement) -> None:
            n, modified, upserted_id, built = _update_one_statement(engine, batch, db, coll, st, validate)
            out.n += n
            out.n_modified += modified
            if upserted_id is not ABSENT:
                out.upserted.append({"index": i, "_id": upserted_id})
            out.statements.append(StatementStats(i, n, modified, upserted_id is not ABSENT, built))

        _run_batch(statements, ordered, one, out)
    return out




def _targets(engine, batch, state, st_q: dict, multi: bool, hint=None, sort=None, collation=None,
             variables=None, decoded: bool = True):
    """(the statement's targets as (record id, BSON, document) rows, the plan). `decoded`: the
    caller needs the documents decoded; without it a multi-statement's rows hold None for them."""
    txn = batch.txn
    if not multi and hint is None and not sort and collation is None and variables is None:
        found = _shortcut_target(engine, txn, state, st_q)
        if found is not None:
            return found
    # on the server's event loop (commands/inline_writes.py): only a plan of bounded work runs
    # there, others raise UnboundedPlan (nothing is written yet) and run again in a worker
    req = Q.FindRequest(filter=st_q, hint=hint, sort=sort, limit=0 if multi else 1, collation=collation,
                        variables=variables, bounded=waits_refused())
    built = Q.build(state, engine.reader(txn), req, for_write=True)
    if not multi:
        for rid, raw, doc in built.root.rows():
            return [(rid, raw, doc if doc is not None else bson.decode(raw))], built
        return [], built
    # Many targets: remember only their record ids (the scan must finish before the first write),
    # then read each again as it is written, so memory stays small whatever the match count.
    root = built.root
    rids = list(root.record_ids()) if type(root) is S.Fetch else [row[0] for row in root.rows()]
    return _reread(txn, state, rids, decoded), built


def _shortcut_target(engine, txn, state, st_q: dict):
    """The one target of a statement the shortcut planner answers (an equality or range on an
    index's leading field, planner/fast.py), with the stages, plan, counts and `$indexStats`
    access plan_builder.build gives it, built without the general builder's other checks; None
    when build might decide otherwise (IDHACK, `$near`, a collation, index filters), so it decides."""
    if type(st_q) is not dict or not st_q or id_point_key(st_q) is not None:
        return None
    caches = getattr(engine, "plan_caches", None)
    if caches is not None and caches.has_filters(state.meta):
        return None   # an index filter may name another index: build applies it
    fp = fast_plan(state.index_map, st_q)
    if fp is None or state.meta.options.get("collation") or _mentions_near(st_q):
        return None
    if not Q.bounded_fast(fp) and waits_refused():
        raise UnboundedPlan()   # on the event loop: the first match may lie after many entries
    access = state.index(fp.index.name)
    if getattr(access, "kind", "") == "clustered":
        return None
    reader = engine.reader(txn)
    req = Q.FindRequest(filter=st_q, limit=1)
    root = Q.fast_stages(state, reader, fp, access, lambda: ParsedQuery(st_q), req)
    root.query_filter = st_q
    built = Q.BuiltPlan(root, QueryPlan("IXSCAN", [IndexPlan(fp.index, None)]), [], req)
    ids = (fp.index.id,)
    reader.depends_on(state.meta.id, ids, state.meta.ns)
    reader.note_use(ids)
    # build wraps a LIMIT 1 around the root: only the first row is read here, and LIMIT passes
    # the counts through, so it is left out
    for rid, raw, doc in root.rows():
        return [(rid, raw, doc if doc is not None else bson.decode(raw))], built
    return [], built


_NEAR_KEYS = frozenset({"$near", "$nearSphere", "$geoNear"})


def _mentions_near(value: Any) -> bool:
    """Whether a near operator name appears anywhere in the filter (wider than the builder's
    own test, so every filter it sends to a near search goes to the builder)."""
    if type(value) is dict:
        return not _NEAR_KEYS.isdisjoint(value) or any(_mentions_near(v) for v in value.values())
    if type(value) is list:
        return any(_mentions_near(v) for v in value)
    return False


class _reread:
    """The (rid, raw, doc) rows of `rids`, read from the writer's transaction one at a time (doc
    None unless `decoded`)."""

    __slots__ = ("_txn", "_state", "_rids", "_decoded")

    def __init__(self, txn, state, rids: list, decoded: bool = True) -> None:
        self._txn, self._state, self._rids, self._decoded = txn, state, rids, decoded

    def __len__(self) -> int:
        return len(self._rids)

    def __bool__(self) -> bool:
        return bool(self._rids)

    def __iter__(self):
        get, key = self._txn.get, self._state.record_key
        decode = bson.decode if self._decoded else _nothing
        for rid in self._rids:
            value = get(key(rid))
            if value is not None:
                raw = record_format.document(value)
                yield rid, raw, decode(raw)


def _nothing(raw: bytes) -> None:
    return None


def _update_one_statement(engine, batch, db, coll, st: UpdateStatement, validate):
    plan = compile_update(st.u, array_filters=st.array_filters, variables=st.variables)
    if st.multi and plan.is_replacement:
        raise CommandError(ErrorCode.FailedToParse, "multi update is not supported for replacement-style update")
    state = batch.collection(db, coll)
    rows, built = ([], None) if state is None else _targets(engine, batch, state, st.q, st.multi, st.hint,
                                                              st.sort, st.collation, st.variables)
    if not rows:
        if not st.upsert:
            return 0, 0, ABSENT, built
        state = ensure_collection(batch, db, coll)
        new = _upsert_document(plan, st.q)
        d, raw = prepare_insert(new, upsert=True)
        if validate is not None:
            validate(state, d, None)
        insert_record(batch, state, d, raw)
        return 1, 0, d["_id"], built
    modified = 0
    needs_position = getattr(plan, "needs_position", True)
    # one target (a list): fewer than `checked`'s interval, so nothing to check between them
    for rid, raw, doc in (rows if type(rows) is list else checked(rows)):
        position = built.matcher.positional(doc) if (needs_position and built.matcher is not None) else None
        new = plan.apply(doc, position=position)
        if validate is not None:
            validate(state, new, doc)
        if update_record(batch, batch.collection(db, coll), rid, doc, raw, new, update_kind(plan),
                         plan.top_fields) is not None:
            modified += 1
    return len(rows), modified, ABSENT, built


def update_kind(plan) -> str:
    """How an update plan makes the new document, for the oplog (records.update_record)."""
    return "replace" if plan.is_replacement else "pipeline" if plan.is_pipeline else "update"


def _upsert_document(plan, query: dict) -> dict:
    """The document an upsert inserts: the query's equality fields (only `_id` for a replacement),
    then the update applied in insert mode."""
    return plan.apply(plan.upsert_seed(query), inserting=True)


@dataclass
class DeleteStatement:
    q: dict
    limit: int = 0
    hint: Any = None
    collation: Optional[dict] = None
    variables: Optional[dict] = None


def delete(engine, db: str, coll: str, statements: list[DeleteStatement], ordered: bool = True) -> WriteOutcome:
    check_writable(db, coll)
    out = WriteOutcome()
    with engine.write(reclaims=True) as batch:
        batch.result = out
        refuse_write(batch.collection(db, coll))

        def one(i: int, st: DeleteStatement) -> None:
            if st.limit not in (0, 1):
                raise CommandError(ErrorCode.FailedToParse,
                                   "The limit field in delete objects must be 0 or 1. Got " + str(st.limit))
            state = batch.collection(db, coll)
            if state is None:
                if st.q:
                    from ..query.match import compile_filter
                    compile_filter(st.q)  # invalid filters fail even on a missing collection
                out.statements.append(StatementStats(i, 0))
                return
            rows, built = _targets(engine, batch, state, st.q, st.limit == 0, st.hint, None, st.collation,
                                   st.variables, decoded=False)
            for rid, raw, doc in checked(rows):
                delete_record(batch, state, rid, doc, raw)
            out.n += len(rows)
            out.statements.append(StatementStats(i, len(rows), built=built))

        _run_batch(statements, ordered, one, out)
    return out


@dataclass
class FindAndModifyRequest:
    query: dict
    sort: Optional[dict] = None
    remove: bool = False
    update: Any = None
    new: bool = False
    fields: Optional[dict] = None
    upsert: bool = False
    array_filters: Optional[list] = None
    hint: Any = None
    collation: Optional[dict] = None
    variables: Optional[dict] = None


def find_and_modify(engine, db: str, coll: str, req: FindAndModifyRequest, validate=None, *,
                    timeseries: bool = False) -> dict:
    """The findAndModify reply body: {lastErrorObject, value}. `timeseries`: raise
    TimeSeriesNamespace when the namespace is a time-series collection's."""
    try:
        check_writable(db, coll)
        plan = None if req.remove else compile_update(req.update, array_filters=req.array_filters,
                                                      variables=req.variables)
        projection = _fields_projection(req)
    except CommandError:
        if timeseries:
            _redirect_timeseries(engine.catalog.get(db, coll))
        raise
    with engine.write(reclaims=req.remove) as batch:
        if timeseries:
            _redirect_timeseries(batch.catalog.get(db, coll))
        batch.result = body = _find_and_modify_in(engine, batch, db, coll, req, plan, projection, validate)
    return body


def _find_and_modify_in(engine, batch, db: str, coll: str, req: FindAndModifyRequest, plan, projection,
                        validate) -> dict:
    state = batch.collection(db, coll)
    refuse_write(state)
    rows, built = ([], None)
    if state is not None:
        rows, built = _targets(engine, batch, state, req.query, False, req.hint, req.sort, req.collation,
                               req.variables)
    if not rows:
        if req.remove or not req.upsert:
            return {"lastErrorObject": {"n": 0, "updatedExisting": False}, "value": None}
        state = ensure_collection(batch, db, coll)
        d, raw = prepare_insert(_upsert_document(plan, req.query), upsert=True)
        if validate is not None:
            validate(state, d, None)
        insert_record(batch, state, d, raw)
        value = _value(d, raw, projection, None) if req.new else None
        return {"lastErrorObject": {"n": 1, "updatedExisting": False, "upserted": d["_id"]},
                "value": value}
    rid, raw, doc = rows[0]
    wants_position = projection is not None and projection.has_positional
    if req.remove:
        delete_record(batch, state, rid, doc, raw)
        matcher = built.matcher if wants_position and built is not None else None
        position = matcher.positional(doc) if matcher is not None else None
        return {"lastErrorObject": {"n": 1}, "value": _value(doc, raw, projection, position)}
    assert plan is not None and built is not None  # an update, with its targets' plan
    matcher = built.matcher if getattr(plan, "needs_position", True) or wants_position else None
    position = matcher.positional(doc) if matcher is not None else None
    new = plan.apply(doc, position=position)
    if validate is not None:
        validate(state, new, doc)
    new_raw = update_record(batch, state, rid, doc, raw, new, update_kind(plan), plan.top_fields)
    if req.new and new_raw is not None:
        doc, raw = new, new_raw
    return {"lastErrorObject": {"n": 1, "updatedExisting": True},
            "value": _value(doc, raw, projection, position)}


def _fields_projection(req: FindAndModifyRequest) -> Any:
    """findAndModify's `fields`, compiled before anything is written (mongod parses it first)."""
    if not req.fields:
        return None
    from ..query.projection import compile_projection
    projection = compile_projection(req.fields, query=req.query)
    if projection.has_positional and req.new:
        raise CommandError(ErrorCode.BadValue, "Cannot use a positional projection and return the new document")
    return projection


def _value(doc: dict, raw: bytes, projection: Any, position: Optional[int]) -> RawBSONDocument:
    """The document findAndModify returns: the stored bytes as they are, unless projected."""
    if projection is None:
        return RawBSONDocument(raw)
    return RawBSONDocument(bson.encode(projection.apply(doc, position=position)))
