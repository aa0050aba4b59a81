"""Single-document writes: a record and all of its index entries, together or not at all.

Every check (uniqueness, key size, document size) runs before the first byte is written, so a
failing document leaves nothing behind even though it shares the batch's storage transaction.
"""
from __future__ import annotations

from typing import Optional

from ..bsonutil.compare import compare
from ..errors import CommandError, ErrorCode
from . import capped
from .documents import encode_updated


def insert_record(engine, txn, state, doc: dict, raw: bytes) -> int:
    rid = state.alloc_rid()
    planned = []
    for ix in state.indexes:
        keys, multikey = ix.keys(doc)
        ix.check_unique(txn, keys, rid, doc)
        planned.append((ix, keys, multikey))
    txn.put(state.record_key(rid), raw)
    _write_entries(engine, txn, state, planned, rid)
    state.pending += 1
    if state.capped:
        capped.after_insert(txn, state, raw)
    return rid


def _write_entries(engine, txn, state, planned, rid: int) -> None:
    dirty = False
    for ix, keys, multikey in planned:
        ix.add(txn, keys, rid)
        if multikey and not multikey <= ix.meta.multikey_paths:
            ix.meta.multikey_paths |= multikey
            dirty = True
    if dirty:
        engine.catalog.save(txn, state.meta)


def update_record(engine, txn, state, rid: int, old: dict, old_raw: bytes, new: dict) -> Optional[bytes]:
    """Replace record `rid` by `new`; returns the new BSON, or None when nothing changed."""
    new = keep_id(old, new)
    new_raw = encode_updated(new)
    if new_raw == old_raw:
        return None
    planned, removals = [], []
    for ix in state.indexes:
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
        ix.check_unique(txn, added, rid, new)
        removals.append((ix, [k for k in old_keys if k not in new_set]))
        planned.append((ix, added, multikey))
    for ix, keys in removals:
        ix.remove(txn, keys, rid)
    txn.put(state.record_key(rid), new_raw)
    if state.capped:
        capped.after_update(state, len(old_raw), len(new_raw))
    _write_entries(engine, txn, state, planned, rid)
    return new_raw


def keep_id(old: dict, new: dict) -> dict:
    """`_id` may not change; a replacement without `_id` keeps the old one, first."""
    old_id = old.get("_id")
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


def delete_record(txn, state, rid: int, doc: dict) -> None:
    for ix in state.indexes:
        keys, _ = ix.keys(doc)
        ix.remove(txn, keys, rid)
    key = state.record_key(rid)
    if state.capped:
        raw = txn.get(key)
        capped.after_delete(state, len(raw) if raw is not None else 0)
    if txn.delete(key):
        state.pending -= 1
