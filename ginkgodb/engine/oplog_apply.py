"""Applying a primary's oplog entries on a secondary (docs/design/replication.md).

One call applies a batch of entries, in their order, in ONE write batch (one storage
transaction): the data, the index entries and the entries themselves (appended to this member's
oplog as they are: `batch.replicated`) commit together or not at all, so a member killed at any
moment restarts from the last batch it applied. Every entry is idempotent (oplog.md, "Applying
the oplog on a secondary"), so a batch applied twice, or an entry already reflected in the data,
does no harm. An entry the applier does not know fails the batch (OplogApplyError): it is never
skipped silently.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

import bson
from bson.codec_options import CodecOptions
from bson.timestamp import Timestamp

from ..bsonutil.delta import apply_diff
from ..errors import CommandError
from . import ddl, layout
from .batch import WriteBatch
from .collection import Collection
from .documents import encode_updated
from .layout import session_key
from .records import delete_record, insert_record, update_record
from .writes import _targets

_CODEC = CodecOptions(document_class=dict, tz_aware=True)


class OplogApplyError(Exception):
    """An entry this applier cannot apply: replication stops rather than diverge silently."""


def apply_entries(engine: Any, raws: list[bytes], logged: bool = True) -> Optional[Timestamp]:
    """Apply `raws` (oplog entries, raw BSON, in ts order) in one write batch; returns the last ts.
    `logged=False`: entries made up by an initial sync's clone (no ts): applied, not appended to
    the oplog, no ts returned."""
    if not raws:
        return None
    with engine.write() as batch:
        batch.replicated = list(raws) if logged else []
        for raw in raws:
            entry = bson.decode(raw, _CODEC)
            try:
                _apply(engine, batch, entry)
            except CommandError as exc:
                raise OplogApplyError(f"cannot apply {_short(entry)}: {exc}") from exc
            record = session_record(entry)
            if record is not None:
                _store_retry_record(batch, entry, record)
        last = bson.decode(raws[-1], _CODEC)["ts"] if logged else None
    return last


def session_record(entry: Mapping) -> Optional[Mapping]:
    """The session record an entry carries: a retryable write's `retryResult`, or for a
    transaction's one entry {txnNumber, committedTransaction} (mongod's config.transactions
    "committed"), so that a commitTransaction retried on this member once it is primary answers
    ok instead of running the transaction again (commands/transactions.py)."""
    record = entry.get("retryResult")
    if record is not None:
        return record if isinstance(record, Mapping) else None
    o = entry.get("o")
    if "txnNumber" in entry and "lsid" in entry and isinstance(o, Mapping) and "applyOps" in o:
        return {"txnNumber": entry["txnNumber"], "committedTransaction": True}
    return None


def _store_retry_record(batch: WriteBatch, entry: Mapping, record: Any) -> None:
    """A session's record ({txnNumber, result} of a retryable write, as the primary stored it, or
    {txnNumber, committedTransaction} of a transaction), kept with the write it describes: a
    retry sent to this member once it is primary answers as the original."""
    key = session_key(entry.get("lsid"))
    if key is None or not isinstance(record, Mapping):
        return
    current = batch.txn.get(layout.retryable_write_key(key))
    if current is not None and int(bson.decode(current).get("txnNumber", -1)) > int(record.get("txnNumber", -1)):
        return
    batch.txn.put(layout.retryable_write_key(key), bson.encode(record))


def _short(entry: Mapping) -> str:
    return str({k: entry.get(k) for k in ("op", "ns", "ts")})


def _apply(engine: Any, batch: WriteBatch, entry: Mapping) -> None:
    op = entry.get("op")
    ns = entry.get("ns", "")
    if op == "n":
        return
    if op in ("i", "u", "d"):
        db, _, name = str(ns).partition(".")
        _apply_crud(engine, batch, op, db, name, entry)
        return
    if op == "c":
        _apply_command(engine, batch, str(ns).partition(".")[0], entry["o"], entry.get("o2"), entry.get("ui"))
        return
    raise OplogApplyError(f"unknown oplog entry op {op!r}")


# ---------------------------------------------------------------------- documents
def _find_by_id(engine: Any, batch: WriteBatch, coll: Collection, _id: Any) -> Optional[tuple]:
    rows, _ = _targets(engine, batch, coll, {"_id": {"$eq": _id}}, False)
    for row in rows:
        return row
    return None


def _apply_crud(engine: Any, batch: WriteBatch, op: str, db: str, name: str, entry: Mapping) -> None:
    o = entry["o"]
    if op == "i":
        coll = ddl.ensure_collection(batch, db, name)
        found = _find_by_id(engine, batch, coll, o["_id"])
        if found is None:
            insert_record(batch, coll, o, encode_updated(o))
        else:   # applied before: the entry's document is the truth
            rid, raw, doc = found
            update_record(batch, coll, rid, doc, raw, o, "replace")
        return
    state = batch.collection(db, name)
    if state is None:
        return      # dropped later in the history: nothing to do
    coll = state
    if op == "u":
        target = (entry.get("o2") or {}).get("_id")
        found = _find_by_id(engine, batch, coll, target)
        if found is None:
            return
        rid, raw, doc = found
        if o.get("$v") == 2 and isinstance(o.get("diff"), Mapping):
            new = apply_diff(doc, o["diff"])
            kind = "update"
        else:
            new = dict(o)
            kind = "replace"
        update_record(batch, coll, rid, doc, raw, new, kind)
        return
    found = _find_by_id(engine, batch, coll, o["_id"])
    if found is not None:
        rid, raw, doc = found
        delete_record(batch, coll, rid, doc, raw)


# ---------------------------------------------------------------------- catalog changes
def _apply_command(engine: Any, batch: WriteBatch, db: str, o: Mapping, o2: Any, ui: Any) -> None:
    name = next(iter(o), None)
    if name == "applyOps":
        for inner in o["applyOps"]:
            _apply(engine, batch, inner)
        return
    if name == "create":
        coll = o["create"]
        if batch.catalog.get(db, coll) is None:
            options = {k: v for k, v in o.items() if k not in ("create", "idIndex")}
            # the primary checked the name: a system namespace it logs (a time-series
            # collection's system.buckets.<name>) is created here as well
            ddl.create_collection(batch, db, coll, options, uuid=ui, implicit=True)
        return
    if name == "drop":
        meta = batch.catalog.get(db, o["drop"])
        if meta is not None:
            ddl.drop_collection(batch, meta)
        return
    if name == "createIndexes":
        coll = ddl.ensure_collection(batch, db, o["createIndexes"])
        spec = {k: v for k, v in o.items() if k != "createIndexes"}
        if coll.meta.index_named(spec.get("name", "")) is None:
            ddl.create_indexes(batch, coll, [spec])
        return
    if name == "dropIndexes":
        state = batch.collection(db, o["dropIndexes"])
        if state is not None and state.meta.index_named(o["index"]) is not None:
            ddl.drop_indexes(batch, state, o["index"])
        return
    if name == "renameCollection":
        src_db, _, src = str(o["renameCollection"]).partition(".")
        dst_db, _, dst = str(o["to"]).partition(".")
        meta = batch.catalog.get(src_db, src)
        if meta is not None:
            ddl.rename_collection(batch, meta, dst_db, dst, drop_target="dropTarget" in o)
        return
    if name == "dropDatabase":
        for meta in [m for m in batch.catalog.all() if m.db == db]:
            ddl.drop_collection(batch, meta)
        batch.dropped_database(db)
        return
    if name == "collMod":
        _apply_coll_mod(batch, db, o)
        return
    raise OplogApplyError(f"the oplog applier does not apply {name!r} entries yet")


#: collMod options the applier sets as they are (the index and TTL changes have their own path)
_PLAIN_COLL_MOD = frozenset({"validator", "validationLevel", "validationAction", "viewOn", "pipeline",
                             "changeStreamPreAndPostImages"})


def _apply_coll_mod(batch: WriteBatch, db: str, o: Mapping) -> None:
    """collMod as the primary logged it: its new options, and the one index's changed options."""
    from .clustered import set_ttl
    from .unique_conversion import apply_unique_options
    meta = batch.catalog.get(db, o["collMod"])
    if meta is None:
        return      # dropped later in the history
    options = {k: v for k, v in o.items() if k not in ("collMod", "index")}
    unknown = set(options) - _PLAIN_COLL_MOD - {"expireAfterSeconds"}
    if unknown:
        raise OplogApplyError(f"the oplog applier does not apply collMod of {sorted(unknown)} yet")
    if "expireAfterSeconds" in options:     # a clustered collection's TTL ("off": none)
        seconds = options.pop("expireAfterSeconds")
        set_ttl(batch, meta, None if seconds == "off" else seconds)
        meta = batch.catalog.get(db, o["collMod"])
        assert meta is not None
    index = o.get("index")
    indexes = logged = None
    if isinstance(index, Mapping):
        target = index.get("name", index.get("keyPattern"))
        changes = {k: v for k, v in index.items() if k in ("hidden", "expireAfterSeconds")}
        indexes, _, logged = ddl.modify_index(meta, target, changes)
        unique = {k: v for k, v in index.items() if k in ("prepareUnique", "unique")}
        if unique:
            indexes, _, more = apply_unique_options(batch, meta, indexes, target, unique)
            logged[0].update(more)
    elif not options:
        return
    ddl.modify_collection(batch, meta, options, indexes, logged)


# ---------------------------------------------------------------------- rollback
def roll_back(engine: Any, common: Timestamp, restores: list[tuple[str, str, Any, Optional[dict]]],
              recreate: tuple[bytes, ...] | list[bytes] = ()) -> int:
    """Undo this member's entries after `common` (a former primary's writes that never reached
    a majority), in one write batch: each (db, coll, _id, doc) named in `restores` becomes `doc`
    (the sync source's version; None: absent), the entries of `recreate` (drops, then the
    source's collections as an initial sync clones them: for undone catalog changes) are
    applied, and the oplog loses its entries after `common` (record ids stay contiguous: the next
    entry follows the last kept one). Logs nothing: the restored documents are the source's
    history already. Returns how many entries were removed."""
    from ..storage.kv import prefix_end
    from . import layout
    from .oplog import COLL, DB, entry_ts
    from .record_format import document
    from .records import remove_raw
    with engine.write() as batch:
        batch.replicated = []
        oplog = batch.catalog.collection(DB, COLL)
        if oplog is None:
            return 0
        doomed: list[tuple[int, bytes]] = []
        kept_rid = 0
        for key, value in batch.txn.scan(oplog.record_prefix, prefix_end(oplog.record_prefix), reverse=True):
            raw = document(value)
            rid = layout.rid_of_record_key(key)
            if entry_ts(raw) <= common:
                kept_rid = rid
                break
            doomed.append((rid, raw))
        for rid, raw in doomed:
            remove_raw(batch, oplog, rid, raw)
        if doomed:
            numbers = batch.numbers(oplog.meta.id)
            numbers.next_rid = (kept_rid or doomed[-1][0] - 1) + 1
            numbers.dirty = True
        _roll_back_retry_records(batch, oplog, [raw for _, raw in doomed])
        for raw in recreate:
            entry = bson.decode(raw, _CODEC)
            try:
                _apply(engine, batch, entry)
            except CommandError as exc:
                raise OplogApplyError(f"cannot roll back with {_short(entry)}: {exc}") from exc
        for db, name, _id, doc in restores:
            state = batch.collection(db, name)
            if state is None:
                if doc is None:
                    continue
                state = ddl.ensure_collection(batch, db, name)
            found = _find_by_id(engine, batch, state, _id)
            if doc is None:
                if found is not None:
                    delete_record(batch, state, found[0], found[2], found[1])
            elif found is None:
                insert_record(batch, state, doc, encode_updated(doc))
            else:
                update_record(batch, state, found[0], found[2], found[1], doc, "replace")
    return len(doomed)


#: how far back a rollback looks in the kept oplog for a session's previous retry record
RETRY_RECORD_SCAN = 100_000


def _roll_back_retry_records(batch: WriteBatch, oplog: Collection, undone: list[bytes]) -> None:
    """The session records of undone retryable writes and transactions go back to the session's newest kept one
    (found in the oplog that remains), or away: a retry then runs the write again."""
    from ..storage.kv import prefix_end
    from .record_format import document
    keys = set()
    for raw in undone:
        entry = bson.decode(raw, _CODEC)
        key = session_key(entry.get("lsid")) if session_record(entry) is not None else None
        if key is not None:
            keys.add(key)
    if not keys:
        return
    for key in keys:
        batch.txn.delete(layout.retryable_write_key(key))
    for n, (_, value) in enumerate(batch.txn.scan(oplog.record_prefix, prefix_end(oplog.record_prefix), reverse=True)):
        if not keys or n >= RETRY_RECORD_SCAN:
            return
        entry = bson.decode(document(value), _CODEC)
        record = session_record(entry)
        key = session_key(entry.get("lsid")) if record is not None else None
        if key in keys and record is not None:
            keys.discard(key)
            batch.txn.put(layout.retryable_write_key(key), bson.encode(record))


def touched_documents(entry: Mapping) -> Optional[list[tuple[str, str, Any]]]:
    """The (db, coll, _id) an entry changed; None when it changed the catalog (not undoable by
    refetching documents)."""
    op = entry.get("op")
    if op == "n":
        return []
    if op in ("i", "u", "d"):
        db, _, name = str(entry.get("ns", "")).partition(".")
        _id = (entry.get("o2") or {}).get("_id") if op == "u" else entry["o"].get("_id")
        return [(db, name, _id)]
    if op == "c" and isinstance(entry.get("o", {}).get("applyOps"), list):
        out: list[tuple[str, str, Any]] = []
        for inner in entry["o"]["applyOps"]:
            touched = touched_documents(inner)
            if touched is None:
                return None
            out += touched
        return out
    return None
