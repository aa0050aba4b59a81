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
A `bsonutil.checked.CheckedRaw` (a document its caller checked ahead, e.g. in a restore's worker
process, or one the embedded client encoded itself: `vouch_encoded`) is stored without decoding
it again, outside transactions and without a validator (a single one too: insert_one's);
a batch made only of them, with nothing to report (no `_id` twice, none already there, none
too long), is written without a per-document step at all (restore's common batch).
"""
from __future__ import annotations

from itertools import repeat
from typing import Any, Optional

from bson import decode
from bson.objectid import ObjectId
from bson.raw_bson import RawBSONDocument
from bson.timestamp import Timestamp

from ..bsonutil.checked import OID_KEY_PREFIX, CheckedRaw, id_key_of, raw_of
from ..bsonutil.keycodec import encode_key
from ..errors import CommandError, ErrorCode
from ..limits import MAX_BSON_OBJECT_SIZE
from ..storage.kv import prefix_end
from . import layout
from .access.btree import BtreeAccess
from .access.entries import MAX_INDEX_KEY
from .batch import Insert, WriteBatch
from .collection import Collection
from .documents import _PLAIN_ID_TYPES, SHALLOW_BELOW, check_depth, check_id, check_size, prepare_insert
from .record_ids import IntRecordIds
from .writes import WriteOutcome, _run_batch
from .writes import insert_into as one_by_one

_TIMESTAMP = frozenset((Timestamp,))
_CHECKED_ONLY = {CheckedRaw}


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
    # one document: nothing to bulk, unless it needs no decoding here (a CheckedRaw)
    state = batch.collection(db, coll) if len(docs) > 1 or (docs and type(docs[0]) is CheckedRaw) else None
    if state is not None and applies(state):
        _insert_bulk(engine, batch, state, docs, ordered, validate, out)
    else:
        one_by_one(engine, batch, db, coll, docs, ordered, validate, out)


def _insert_bulk(engine: Any, batch: Any, coll: Collection, docs: list, ordered: bool,
                 validate: Optional[Any], out: WriteOutcome) -> None:
    ix: Any = coll.indexes[0]
    txn = batch.txn
    prefix = ix.prefix
    bulk_books = type(batch) is WriteBatch
    check = None if validate is None or not coll.meta.options.get("validator") else validate
    if bulk_books and check is None and len(docs) == 1 and type(docs[0]) is CheckedRaw:
        # an insert_one the client vouched for: one probe for its `_id`; a problem found takes
        # the general steps below, which report it
        key = docs[0].id_key
        lo = prefix + key
        if len(key) <= MAX_INDEX_KEY and txn.first(lo, prefix_end(lo)) is None:
            _write_all(batch, coll, ix, [key], [bytes(docs[0].raw)], None)
            out.n += 1
            return
    # the index's greatest entry: a key beyond it cannot be there yet (ascending _ids, as a
    # restore's or an import's usually are, need no lookup)
    last = next(iter(txn.scan(prefix, prefix_end(prefix), reverse=True)), None)
    last_entry = last[0] if last is not None else None
    tick = engine.clock.tick
    keys_of = ix.keys
    # only bytes are kept per document: decoded documents held to the end of the batch would
    # make every garbage collection pass walk them
    seen: set[bytes] = set()
    keys: list[bytes] = []
    raws: list[bytes] = []

    def one(i: int, doc: Any) -> None:
        d: Optional[dict] = None
        raw = b""
        if type(doc) is CheckedRaw and check is None and bulk_books:
            # checked ahead by the caller (bsonutil.checked: valid, `_id` first and plain, no
            # Timestamp to fill, shallow): the bytes and the `_id` key as they come
            raw, key = bytes(doc.raw), doc.id_key
            if key in seen or (last_entry is not None and prefix + key <= last_entry
                               and txn.first(prefix + key, prefix_end(prefix + key)) is not None):
                raise ix.duplicate_error(key, decode(raw))
            if len(key) > MAX_INDEX_KEY:
                raise CommandError(ErrorCode.OBSOLETE_KeyTooLong,
                                   f"key too large to index, failing {len(key)} bytes (limit "
                                   f"{MAX_INDEX_KEY}) in index {ix.meta.name}")
            seen.add(key)
            keys.append(key)
            raws.append(raw)
            return
        if type(doc) is RawBSONDocument:       # a restore's, an import's: the stored bytes as given
            raw = bytes(doc.raw)
            d = decode(raw)
            if not d or next(iter(d)) != "_id" or not _TIMESTAMP.isdisjoint(map(type, d.values())):
                d = None                       # _id to move, or a Timestamp(0, 0) to fill in
            else:
                value = d["_id"]
                if type(value) not in _PLAIN_ID_TYPES:
                    check_id(value)
                size = len(raw)
                if size > MAX_BSON_OBJECT_SIZE or size >= SHALLOW_BELOW:
                    check_size(size)
                    check_depth(d, size)
        if d is None:
            d, raw = prepare_insert(doc, now=tick)
        if check is not None:
            check(coll, d, None)
        value = d["_id"]
        kind = type(value)
        if kind is ObjectId:                   # keycodec's encoding of an ObjectId, inlined
            key = OID_KEY_PREFIX + value.binary
        else:
            key = encode_key((value,)) if kind in _PLAIN_ID_TYPES else keys_of(d)[0][0]
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
        if not bulk_books:     # a transaction's batch keeps its own books, one call at a time
            batch.claim(prefix + key)
            rids.append(batch.alloc_rid(coll, d))
            batch.inserted(coll, rids[-1], raw)
        keys.append(key)
        raws.append(raw)

    if bulk_books and check is None and _all_checked(docs, prefix, last_entry, keys, raws):
        _write_all(batch, coll, ix, keys, raws, None)
        out.n += len(raws)
        return
    rids: list[int] = []
    _run_batch(docs, ordered, one, out)
    if raws:
        _write_all(batch, coll, ix, keys, raws, None if bulk_books else rids)
        out.n += len(raws)


def _all_checked(docs: list, prefix: bytes, last_entry: Optional[bytes], keys: list[bytes],
                 raws: list[bytes]) -> bool:
    """True, with `keys` and `raws` filled, when every document is a CheckedRaw and the batch
    holds nothing to report: no `_id` twice, every key beyond the index's greatest entry (so
    none is there yet) and none too long. Otherwise False, `keys` and `raws` untouched: the
    documents go one by one, which finds each problem and reports it at its document."""
    if not docs or set(map(type, docs)) != _CHECKED_ONLY:
        return False
    found = list(map(id_key_of, docs))
    if (len(set(found)) != len(found) or max(map(len, found)) > MAX_INDEX_KEY
            or (last_entry is not None and prefix + min(found) <= last_entry)):
        return False
    keys.extend(found)
    raws.extend(map(bytes, map(raw_of, docs)))
    return True


def _write_all(batch: Any, coll: Collection, ix: Any, keys: list[bytes], raws: list[bytes],
               rids: Any) -> None:
    """The records and `_id` entries of the documents that passed, and unless `rids` says they
    were given one by one, their claims, record ids, numbers and logical operations, in bulk."""
    prefix = ix.prefix
    # ordinary record ids (applies() leaves clustered collections out): the record key and the
    # index entry both end with the same 8 bytes
    suffix = layout.rid_bytes if type(ix.rids) is IntRecordIds else ix.rids.suffix
    if rids is None and len(raws) == 1:   # an insert_one's: the batch's own steps, two puts
        entry, raw = prefix + keys[0], raws[0]
        batch.claim(entry)
        rid = batch.alloc_rid(coll, None)   # not clustered (applies()): no document needed
        batch.inserted(coll, rid, raw)
        packed = suffix(rid)
        batch.txn.put(coll.record_prefix + packed, raw if coll.codec == "none" else coll.stored(raw))
        batch.txn.put(entry + packed, b"")
        return
    entries = list(map(prefix.__add__, keys))
    if rids is None:
        batch.claims.extend(entries)
        conflicts = batch._conflicts
        if conflicts is not None and conflicts.active:
            conflicts.check_ordinary(entries)
        numbers = batch.numbers(coll.meta.id)
        first = numbers.next_rid
        rids = range(first, first + len(raws))
        numbers.next_rid = first + len(raws)
        numbers.count += len(raws)
        numbers.size += sum(map(len, raws))
        numbers.dirty = True
        meta = coll.meta
        ns, uuid = meta.ns, meta.uuid
        # Insert(ns, uuid, rid, raw) each, built without a Python call per document
        batch.ops.extend(map(tuple.__new__, repeat(Insert), zip(repeat(ns), repeat(uuid), rids, raws)))
    packed = list(map(suffix, rids))
    values = raws if coll.codec == "none" else list(map(coll.stored, raws))
    txn = batch.txn
    txn.put_many(zip(map(coll.record_prefix.__add__, packed), values))
    index_entries = list(map(bytes.__add__, entries, packed))
    index_entries.sort()
    txn.put_many(zip(index_entries, repeat(b"")))
