"""Single-document writes: a record and all of its index entries, together or not at all.

Every check (uniqueness, key size, document size) runs before the first byte is written, so a
failing document leaves nothing behind even though it shares the batch's storage transaction.
Each write is recorded in the batch as a logical operation (docs/design/seams.md).
"""
from __future__ import annotations

from typing import Optional

import bson

from ..bsonutil.compare import compare
from ..bsonutil.delta import top_level_values
from ..errors import CommandError, ErrorCode
from ..storage.kv import prefix_end
from . import layout, record_format, zstd_dictionaries
from .batch import WriteBatch
from .capped import over_limit
from .collection import Collection
from .documents import encode_updated


def insert_record(batch: WriteBatch, coll: Collection, doc: dict, raw: bytes) -> int:
    txn = batch.txn
    rid = batch.alloc_rid(coll, doc)
    planned = []
    for ix in coll.indexes:
        keys, multikey = ix.keys(doc)
        ix.check_keys(txn, keys, rid, doc)
        if ix.meta.unique:
            for key in keys:
                batch.claim(ix.prefix + key)
        planned.append((ix, keys, multikey))
    txn.put(coll.record_key(rid), raw if coll.codec == "none" else coll.stored(raw))
    _write_entries(batch, coll, planned, rid)
    batch.inserted(coll, rid, raw)
    if coll.capped:
        _evict_oldest(batch, coll)
    elif coll.codec == "zstd" and not coll.meta.dictionary:
        zstd_dictionaries.after_insert(batch, coll)
    return rid


def _evict_oldest(batch: WriteBatch, coll: Collection) -> None:
    """A capped collection over its limits loses its oldest documents (natural order)."""
    numbers = batch.numbers(coll.meta.id)
    while over_limit(numbers, coll.meta.options):
        for key, value in batch.txn.scan(coll.record_prefix, prefix_end(coll.record_prefix)):
            old = record_format.document(value)
            delete_record(batch, coll, coll.rid_of_record_key(key), bson.decode(old), old)
            break


def _write_entries(batch: WriteBatch, coll: Collection, planned: list, rid: int) -> None:
    grown: dict[str, frozenset] = {}
    for ix, keys, multikey in planned:
        ix.add(batch.txn, keys, rid)
        if multikey and not multikey <= ix.meta.multikey_paths:
            grown[ix.meta.name] = frozenset(ix.meta.multikey_paths | multikey)
    if grown:
        mark_multikey(batch, coll, grown)


def mark_multikey(batch: WriteBatch, coll: Collection, grown: dict[str, frozenset]) -> None:
    """Record that indexes became multikey (a new catalog entry, published at commit)."""
    current = batch.collection(coll.meta.db, coll.meta.name)
    meta = current.meta if current is not None else coll.meta
    indexes = [ix.evolve(multikey_paths=ix.multikey_paths | grown[ix.name]) if ix.name in grown else ix
               for ix in meta.indexes]
    batch.save_meta(meta.evolve(indexes=indexes), "multikey", indexes=sorted(grown))


def update_record(batch: WriteBatch, coll: Collection, rid: int, old: dict, old_raw: bytes,
                  new: dict, kind: str = "update", touched: Optional[frozenset] = None) -> Optional[bytes]:
    """Replace record `rid` by `new`; returns the new BSON, or None when nothing changed. `kind`
    says how `new` was made ("update", "pipeline", "replace"): the oplog logs it accordingly;
    `touched`: the top-level fields the update may have changed (UpdatePlan.top_fields)."""
    new = keep_id(old, new)
    new_raw = encode_updated(new, old)
    if new_raw == old_raw:
        return None
    txn = batch.txn
    batch.claim(coll.record_key(rid))
    planned: list = []
    removals: list = []
    for ix in coll.indexes:
        if ix.unchanged(old, new):
            continue
        old_keys, _ = ix.keys(old)
        new_keys, multikey = ix.keys(new)
        if old_keys == new_keys:
            if multikey and not multikey <= ix.meta.multikey_paths:
                planned.append((ix, [], multikey))
            continue
        old_set, new_set = set(old_keys), set(new_keys)
        added = [k for k in new_keys if k not in old_set]
        ix.check_keys(txn, added, rid, new)
        if ix.meta.unique:
            for key in added:
                batch.claim(ix.prefix + key)
        removals.append((ix, [k for k in old_keys if k not in new_set]))
        planned.append((ix, added, multikey))
    for ix, keys in removals:
        ix.remove(txn, keys, rid)
    txn.put(coll.record_key(rid), coll.stored(new_raw))
    _write_entries(batch, coll, planned, rid)
    batch.updated(coll, rid, old_raw, new_raw, kind, old, new, touched)
    return new_raw


def keep_id(old: dict, new: dict) -> dict:
    """`_id` may not change; a replacement without `_id` keeps the old one, first."""
    old_id = old.get("_id")
    if new.get("_id", old) is old_id and next(iter(new)) == "_id":
        return new   # an operator update keeps the very `_id` object, first: nothing to check
    if "_id" not in new:
        return {"_id": old_id, **new}
    new_id = new["_id"]
    if compare(old_id, new_id) != 0 or type(old_id) is not type(new_id):
        if not (isinstance(old_id, (int, float)) and isinstance(new_id, (int, float)) and old_id == new_id):
            raise CommandError(ErrorCode.ImmutableField,
                               "Performing an update on the path '_id' would modify the immutable field '_id'")
    if next(iter(new)) != "_id":
        new = {"_id": new_id, **{k: v for k, v in new.items() if k != "_id"}}
    return new


def delete_record(batch: WriteBatch, coll: Collection, rid: int, doc: Optional[dict], raw: bytes) -> None:
    """Remove a record and its index entries. `doc`: the decoded document, or None when the
    caller has only its bytes (a multi-document delete): the keys then come from the bytes when
    the indexes allow it (`_remove_keys_of_bytes`), the document is decoded only if not."""
    txn = batch.txn
    key = coll.record_key(rid)
    batch.claim(key)
    if doc is None:
        doc = _remove_keys_of_bytes(txn, coll, rid, raw)
    if doc is not None:
        for ix in coll.indexes:
            keys, _ = ix.keys(doc)
            ix.remove(txn, keys, rid)
    if txn.delete(key):
        batch.deleted(coll, rid, raw)


def _remove_keys_of_bytes(txn, coll: Collection, rid: int, raw: bytes) -> Optional[dict]:
    """Remove the record's index entries with each key made from its field's value read out of
    `raw`, when every index makes its one key from one top-level field (Collection.raw_fields);
    None when that removed them all. Otherwise the decoded document, whose keys the caller
    removes (again: removing an entry twice changes nothing): when an index needs more, a
    value needs the document (missing, null, an array, a document), or an entry was not where
    the bytes said (duplicate field names: the decoded document's last value was indexed; an
    index without array keys holds exactly one entry per document, so a missing one shows it)."""
    names = coll.raw_fields
    if names is not None:
        values = top_level_values(raw, names)
        for ix in coll.indexes:
            field = ix.raw_field        # never None here (raw_fields says so)
            key = None if field is None else ix.simple_key(values.get(field))
            if key is None or not ix.remove_one(txn, key, rid):
                break
        else:
            return None
    return bson.decode(raw)


def append_raws(batch: WriteBatch, coll: Collection, raws: list[bytes]) -> int:
    """Append records to a collection without indexes, recording no logical operation (the oplog
    writes its own entries so); moves the collection's numbers. Returns the next record id."""
    numbers = batch.numbers(coll.meta.id)
    first = numbers.next_rid
    prefix, pack = coll.record_prefix, layout.rid_bytes
    stored = coll.stored
    if len(raws) == 1:
        batch.txn.put(prefix + pack(first), stored(raws[0]))
    else:
        keys = map(prefix.__add__, map(pack, range(first, first + len(raws))))   # no Python call a record
        batch.txn.put_many(list(zip(keys, raws if coll.codec == "none" else map(stored, raws))))
    numbers.count += len(raws)
    numbers.size += sum(map(len, raws))
    numbers.next_rid = first + len(raws)
    numbers.dirty = True
    return numbers.next_rid


def remove_raw(batch: WriteBatch, coll: Collection, rid: int, raw: bytes) -> None:
    """Remove a record `append_raw` wrote (the oplog's truncation), unlogged."""
    if batch.txn.delete(coll.record_key(rid)):
        numbers = batch.numbers(coll.meta.id)
        numbers.count -= 1
        numbers.size -= len(raw)
        numbers.dirty = True
