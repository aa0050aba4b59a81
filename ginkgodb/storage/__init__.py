"""Storage: ordered key-value engines (LMDB durable, memory). Knows nothing of documents."""
from __future__ import annotations

from typing import Optional

from .batch import KeyBatch
from .kv import KVEngine, Snapshot, Txn, prefix_end
from .memory import MemoryEngine


def open_engine(path: Optional[str] = None, **options) -> KVEngine:
    """LMDB at `path`, or an in-memory engine when `path` is None or ':memory:'."""
    if path is None or path == ":memory:":
        return MemoryEngine()
    from .lmdb_engine import LmdbEngine
    return LmdbEngine(path, **options)


__all__ = ["KVEngine", "KeyBatch", "MemoryEngine", "Snapshot", "Txn", "open_engine", "prefix_end"]
