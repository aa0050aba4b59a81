"""Capped collections: a fixed-size collection that drops its oldest documents to make room.

The byte and document totals are kept per collection in memory (counted from storage the first
time they are needed, and again after any rolled-back transaction, which discards runtime state).
"""
from __future__ import annotations

import bson

from ..storage.kv import prefix_end
from . import layout


def _totals(txn, state) -> list:
    if state.capped_totals is None:
        count = size = 0
        for _, raw in txn.scan(state.record_prefix, prefix_end(state.record_prefix)):
            count += 1
            size += len(raw)
        state.capped_totals = [count, size]
    return state.capped_totals


def max_bytes(options: dict) -> int:
    """mongod rounds a capped size up to a multiple of 256 bytes."""
    size = int(options.get("size") or 0)
    return (size + 255) // 256 * 256


def after_insert(txn, state, raw: bytes) -> None:
    """Account for a new document and evict the oldest ones beyond `size` or `max`."""
    from .records import delete_record
    if state.capped_totals is None:
        totals = _totals(txn, state)  # counted from storage, the new document included
    else:
        totals = state.capped_totals
        totals[0] += 1
        totals[1] += len(raw)
    options = state.meta.options
    limit_bytes = max_bytes(options)
    limit_docs = int(options.get("max") or 0)
    while totals[0] > 1 and (totals[1] > limit_bytes or (limit_docs and totals[0] > limit_docs)):
        for key, old in txn.scan(state.record_prefix, prefix_end(state.record_prefix)):
            delete_record(txn, state, layout.rid_of_record_key(key), bson.decode(old))
            break


def after_delete(state, raw_len: int) -> None:
    if state.capped_totals is not None:
        state.capped_totals[0] -= 1
        state.capped_totals[1] -= raw_len


def after_update(state, old_len: int, new_len: int) -> None:
    if state.capped_totals is not None:
        state.capped_totals[1] += new_len - old_len
