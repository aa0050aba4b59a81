"""find, count and distinct over a collection, producing raw BSON for the front ends."""
from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any, Optional

import bson
from bson.raw_bson import RawBSONDocument

from ..bsonutil import keycodec
from ..query.operation import checked
from . import plan_builder as Q
from . import plan_stages as S
from . import record_format
from .batch import read_numbers
from .cursors import ServerCursor, TailableCursor
from .views import find_pipeline, resolve


def _raw_docs(root) -> Iterator[RawBSONDocument]:
    encode = bson.encode
    for _, raw, doc in root.rows():
        yield RawBSONDocument(raw if raw is not None else encode(doc))


def open_find(engine, db: str, coll: str, req: Q.FindRequest, ctx=None, *, no_timeout: bool = False,
              single_batch: bool = False) -> ServerCursor:
    """A cursor over the query's results (not yet registered: the caller decides after batch one)."""
    reader = engine.reader()
    reader.open()
    try:
        view = resolve(reader.catalog, db, coll)
        if view is not None:
            _refuse_on_view(req)
            reader.close()
            return ServerCursor(f"{db}.{coll}", _encode_all(_view_docs(engine, db, coll, req, ctx)), None,
                                no_timeout=no_timeout)
        if req.sort:   # only a sort spills (to the data directory's temporary folder)
            req.temp_dir = engine.temp_dir()
        state = reader.catalog.collection(db, coll)
        built = Q.build(state, reader, req, ctx)
    except BaseException:
        reader.close()
        raise
    # the collection's own namespace string: made once, its hash kept (the statistics hash it)
    ns = state.meta.ns if state is not None else f"{db}.{coll}"
    return ServerCursor(ns, _raw_docs(built.root), reader, no_timeout=no_timeout, stats=built)


class PointRead:
    """A find that IDHACK answers, read without a cursor or stages: its document (None when no
    document has the `_id`) and what query statistics read of a cursor."""

    __slots__ = ("ns", "doc", "stats", "n_returned")

    exhausted = True   # one probe: nothing is left for a getMore

    def __init__(self, ns: str, doc: Optional[RawBSONDocument], stats: Q.PointPlan) -> None:
        self.ns, self.doc, self.stats = ns, doc, stats
        self.n_returned = 1 if doc is not None else 0


def find_point(engine, db: str, coll: str, req: Q.FindRequest) -> Optional[PointRead]:
    """The answer of a find `build` would plan as IDHACK, read as that plan reads it (the same
    reader, plan_stages.probe_id) but without the stages, the cursor and the batch around one
    probe; None when the find is not such a read (a view, no collection, a collection default
    collation, an option IDHACK does not take): the caller opens a cursor then."""
    reader = engine.reader()
    reader.open()
    try:
        catalog = reader.catalog
        state = catalog.collection(db, coll)
        if state is None or resolve(catalog, db, coll) is not None:
            return None
        key = Q.idhack_key(state, req)
        if key is None:
            return None
        found = S.probe_id(state, reader, key)
    finally:
        reader.close()
    Q.reads_by_id(state, reader, False)
    raw = found[1] if found is not None else None
    return PointRead(state.meta.ns, RawBSONDocument(raw) if raw is not None else None,
                     Q.PointPlan(0 if found is None else 1, 0 if raw is None else 1))


def _refuse_on_view(req: Q.FindRequest) -> None:
    """A find on a view becomes an aggregation, which has no index bounds, keys or record ids."""
    for option, given in (("min", req.min_key), ("max", req.max_key), ("returnKey", req.return_key),
                          ("showRecordId", req.show_record_id)):
        if given:
            from ..errors import CommandError, ErrorCode
            raise CommandError(ErrorCode.InvalidPipelineOperator, f"Option {option} not supported in aggregation.")


def open_tailable(engine, db: str, coll: str, filt: dict, ctx=None, *, await_data: bool = False,
                  no_timeout: bool = False) -> TailableCursor:
    """A tailable cursor over a capped collection: natural order, resuming after the last seen."""
    from ..storage.kv import prefix_end
    from . import layout
    matcher = Q.cached_filter(filt, Q.FindRequest(filter=filt)) if filt else None
    reader = engine.reader()
    with reader:
        state = reader.catalog.collection(db, coll)
    reader.depends_on(state.meta.id, (), state.meta.ns)

    def restart(cursor: TailableCursor) -> Iterator[RawBSONDocument]:
        last = cursor.last_rid
        if last and reader.get(state.record_key(last)) is None:
            # the record it stood on was evicted (or deleted): mongod's collection scan dies too
            from ..errors import CommandError, ErrorCode
            raise CommandError(ErrorCode.CappedPositionLost,
                               "CollectionScan died due to position in capped collection being deleted. "
                               f"Last seen record id: RecordId({last})")
        end = prefix_end(state.record_prefix)
        for key, value in reader.scan(state.record_key(last + 1), end):
            cursor.last_rid = layout.rid_of_record_key(key)
            raw = record_format.document(value)
            if matcher is None or matcher(bson.decode(raw)):
                yield RawBSONDocument(raw)

    cursor = TailableCursor(f"{db}.{coll}", restart, reader, await_data=await_data, no_timeout=no_timeout,
                            signal=engine.commit_signal)
    start = _oplog_start(filt) if (db, coll) == ("local", "oplog.rs") else None
    if start is not None:
        # a secondary's `{ts: {$gt: T}}`: seek to T by binary search instead of scanning the
        # oplog from its first entry (the matcher still checks every entry returned)
        from . import oplog as O
        with reader:
            rid = O.rid_at_or_after(reader, state, start)
            first, last = O.first_entry(reader, state), O.last_entry(reader, state)
        if rid is not None and first is not None and rid > first[0]:
            cursor.last_rid = rid - 1
        elif rid is None and last is not None:   # caught up: only entries still to come match
            cursor.last_rid = last[0]
    return cursor


def _oplog_start(filt: dict) -> Any:
    """The T of an oplog filter `{ts: {$gt|$gte: T}}` (nothing else), or None."""
    from bson.timestamp import Timestamp
    if not isinstance(filt, dict) or list(filt) != ["ts"] or not isinstance(filt["ts"], dict):
        return None
    cond = filt["ts"]
    if len(cond) != 1:
        return None
    (op, value), = cond.items()
    return value if op in ("$gt", "$gte") and isinstance(value, Timestamp) else None


def _view_docs(engine, db: str, view: str, req: Q.FindRequest, ctx=None, extra: tuple = ()) -> Iterator[dict]:
    from .aggregate import run
    stages = find_pipeline(req.filter, req.sort, req.skip, req.limit, req.projection) + list(extra)
    return run(engine, db, view, stages, ctx, req.variables, allow_disk_use=req.allow_disk_use)


def _encode_all(docs: Iterator[dict]) -> Iterator[RawBSONDocument]:
    encode = bson.encode
    for d in docs:
        yield RawBSONDocument(encode(d))


def explain_find(engine, db: str, coll: str, req: Q.FindRequest, verbosity: str, command: dict,
                 ctx=None) -> dict:
    req.temp_dir = engine.temp_dir()
    with engine.reader() as reader:
        state = reader.catalog.collection(db, coll)
        built = Q.build(state, reader, req, ctx, explain=True)
        started = time.monotonic()
        if verbosity != "queryPlanner":
            for _ in built.root.rows():
                pass
        millis = int((time.monotonic() - started) * 1000)
    return Q.explain_document(built, state, req, f"{db}.{coll}", verbosity, millis, command)


def count(engine, db: str, coll: str, filt: Optional[dict], skip: int = 0, limit: int = 0,
          hint: Any = None, ctx=None, collation=None) -> int:
    with engine.reader() as reader:
        if resolve(reader.catalog, db, coll) is not None:
            req = Q.FindRequest(filter=filt or {}, skip=skip, limit=limit)
            return sum(1 for _ in _view_docs(engine, db, coll, req, ctx))
        state = reader.catalog.collection(db, coll)
        if state is None:
            if filt:
                Q.build(None, None, Q.FindRequest(filter=filt))  # the filter's errors ($text: 27)
            return 0
        if not filt and hint is None:
            # the count the writes keep in the same transactions (batch.numbers): O(1)
            n = max(0, read_numbers(reader.txn, state.meta.id).count - skip)
            return min(n, limit) if limit else n
        req = Q.FindRequest(filter=filt or {}, skip=skip, limit=limit, hint=hint, collation=collation)
        built = Q.build(state, reader, req, ctx)
        return sum(1 for _ in checked(built.root.rows()))


def distinct(engine, db: str, coll: str, key: str, filt: Optional[dict], ctx=None, collation=None,
             hint: Any = None) -> list:
    req = Q.FindRequest(filter=filt or {}, hint=hint, collation=collation)
    parts = key.split(".")
    with engine.reader() as reader:
        if resolve(reader.catalog, db, coll) is not None:
            return _distinct(_view_docs(engine, db, coll, req, ctx), parts, None)
        state = reader.catalog.collection(db, coll)
        if state is None:
            return []
        if collation is None:
            collation = state.meta.options.get("collation")
        built = Q.build(state, reader, req, ctx)
        decode = bson.decode
        docs = (doc if doc is not None else decode(raw) for _, raw, doc in built.root.rows())
        return _distinct(docs, parts, Q.collation_of(collation))


def _distinct(docs: Iterator[dict], parts: list[str], coll) -> list:
    """Values in order, equal ones (by the collation, if any) given once: the first seen."""
    seen: dict[bytes, Any] = {}
    for doc in checked(docs):
        for value in _distinct_values(doc, parts):
            k = keycodec.encode_key((coll.transform(value) if coll is not None else value,))
            if k not in seen:
                seen[k] = value
    return [seen[k] for k in sorted(seen)]


def _distinct_values(value: Any, parts: list[str]) -> Iterator[Any]:
    """Values at a dotted path, arrays unwound one level as mongod's distinct does."""
    if not parts:
        if isinstance(value, list):
            yield from value
        else:
            yield value
        return
    head, rest = parts[0], parts[1:]
    if isinstance(value, dict):
        if head in value:
            yield from _distinct_values(value[head], rest)
    elif isinstance(value, list):
        if head.isdigit() and int(head) < len(value):
            yield from _distinct_values(value[int(head)], rest)
        for item in value:
            if isinstance(item, dict) and head in item:
                yield from _distinct_values(item[head], rest)
