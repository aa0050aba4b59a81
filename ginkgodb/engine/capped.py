"""Capped collections: a fixed-size collection that drops its oldest documents to make room.

The document and byte totals are the collection's persisted numbers (batch.numbers), moved by
every write in the same transaction, so the limits are checked without a count of their own;
records.insert_record evicts while `over_limit` says so.
"""
from __future__ import annotations

from .batch import CollectionNumbers


def max_bytes(options: dict) -> int:
    """mongod rounds a capped size up to a multiple of 256 bytes."""
    size = int(options.get("size") or 0)
    return (size + 255) // 256 * 256


def over_limit(numbers: CollectionNumbers, options: dict) -> bool:
    """Beyond `size` bytes or `max` documents (the last document always stays)."""
    if numbers.count <= 1:
        return False
    limit_docs = int(options.get("max") or 0)
    return numbers.size > max_bytes(options) or bool(limit_docs and numbers.count > limit_docs)
