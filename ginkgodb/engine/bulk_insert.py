"""Inserts into a collection whose only index is `_id`: the checks per document, the writes in bulk.

A restore or an import fills collections before their secondary indexes exist (mongorestore
builds them after the data), so most of a large insert lands in a collection with nothing but
the `_id` index. There each document needs exactly what `writes.insert` gives it (the same
`prepare_insert` checks, the validator, the `_id` uniqueness check, its record id and its
logical operation for the oplog), but the records and index entries are written with one
`put_many` each at the end, the uniqueness check needs no storage lookup for a key beyond the
index's greatest entry when the batch began, and no per-document index machinery runs. Anything else (capped,
clustered, a secondary index, an `_id` index with a collation, zstd still training its
dictionary) takes the ordinary path, `writes.insert_into`, in the same write batch.
`EngineOperations.insert` sends every batch here, so the whole suite exercises both paths.
"""
from __future__ import annotations

from itertools import repeat
from typing import Any, Optional

from ..errors import CommandError, ErrorCode
from ..storage.kv import prefix_end
from .access.btree import BtreeAccess
from .access.entries import MAX_INDEX_KEY
from .collection import Collection
from .documents import prepare_insert
from .writes import WriteOutcome, _run_batch
from .writes import insert_into as one_by_one


def applies(coll: Collection) -> bool:
    """True when `coll` takes the bulk path: `_id` its only index, a plain one, plain records."""
    if coll.capped or coll.clustered or len(coll.indexes) != 1:
        return False
    if coll.codec == "zstd" and not coll.meta.dictionary:     # dictionary training watches inserts
        return False
    ix = coll.indexes[0]
    return (type(ix) is BtreeAccess and ix.meta.is_id and ix.collation is None
            and ix._partial is None and ix._simple_field == "_id")


def insert_into(engine: Any, batch: Any, db: str, coll: str, docs: list, ordered: bool, validate: Any,
                out: WriteOutcome) -> None:
    """`writes.insert_into`, with the bulk path where it applies (`writes.insert(into=...)`)."""
    state = batch.collection(db, coll) if len(docs) > 1 else None     # one document: nothing to bulk
    if state is not None and applies(state):
        _insert_bulk(engine, batch, state, docs, ordered, validate, out)
    else:
        one_by_one(engine, batch, db, coll, docs, ordered, validate, out)


def _insert_bulk(engine: Any, batch: Any, coll: Collection, docs: list, ordered: bool,
                 validate: Optional[Any], out: WriteOutcome) -> None:
    ix: Any = coll.indexes[0]
    txn = batch.txn
    prefix = ix.prefix
    suffix = ix.rids.suffix
    record_key, stored = coll.record_key, coll.stored
    # the index's greatest entry: a key beyond it cannot be there yet (ascending _ids, as a
    # restore's or an import's usually are, need no lookup)
    last = next(iter(txn.scan(prefix, prefix_end(prefix), reverse=True)), None)
    last_entry = last[0] if last is not None else None
    check = None if validate is None or not coll.meta.options.get("validator") else validate
    tick = engine.clock.tick
    # only bytes are kept per document: decoded documents held to the end of the batch would
    # make every garbage collection pass walk them
    seen: set[bytes] = set()
    record_keys: list[bytes] = []
    values: list[bytes] = []
    entries: list[bytes] = []

    def one(i: int, doc: Any) -> None:
        d, raw = prepare_insert(doc, now=tick)
        if check is not None:
            check(coll, d, None)
        keys, _ = ix.keys(d)
        key = keys[0]
        if key in seen:
            raise ix.duplicate_error(key, d)
        if last_entry is not None:
            lo = prefix + key
            if lo <= last_entry and txn.first(lo, prefix_end(lo)) is not None:
                raise ix.duplicate_error(key, d)
        if len(key) > MAX_INDEX_KEY:
            raise CommandError(ErrorCode.OBSOLETE_KeyTooLong,
                               f"key too large to index, failing {len(key)} bytes (limit {MAX_INDEX_KEY}) "
                               f"in index {ix.meta.name}")
        seen.add(key)
        batch.claim(prefix + key)
        rid = batch.alloc_rid(coll, d)
        record_keys.append(record_key(rid))
        values.append(stored(raw))
        entries.append(prefix + key + suffix(rid))
        batch.inserted(coll, rid, raw)
        out.n += 1

    _run_batch(docs, ordered, one, out)
    if record_keys:
        txn.put_many(zip(record_keys, values))
        entries.sort()
        txn.put_many(zip(entries, repeat(b"")))
