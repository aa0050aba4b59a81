"""The engine of one data directory (or of one in-memory database set)."""
from __future__ import annotations

from typing import Optional

from ..storage import KVEngine, open_engine


class Engine:
    """Owns the KV engine, the catalog and every collection. Thread-safe; one per data directory."""

    def __init__(self, kv: KVEngine) -> None:
        self.kv = kv

    @classmethod
    def open(cls, path: Optional[str] = None, **options) -> "Engine":
        """LMDB at `path` (created if needed), or in-memory when `path` is None."""
        return cls(open_engine(path, **options))

    def close(self) -> None:
        self.kv.close()
