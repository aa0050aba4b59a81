"""The engine of one data directory (or of one in-memory database set)."""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator, Optional

from ..storage import KVEngine, open_engine
from ..storage.kv import prefix_end
from . import layout
from .catalog import Catalog, CollectionMeta
from .cursors import CursorManager
from ..planner.fast import IndexMap
from .indexes import IndexRuntime
from .reader import Reader


class CollectionState:
    """Runtime view of one collection: its catalog entry, compiled indexes, next record id."""

    def __init__(self, meta: CollectionMeta, next_rid: int) -> None:
        self.meta = meta
        self.next_rid = next_rid
        self.record_prefix = layout.record_prefix(meta.id)
        self.indexes: list[IndexRuntime] = []
        self._validator = None
        self.count: Optional[int] = None  # documents, once counted (committed writes only)
        self.pending = 0                    # inserts minus deletes of the open write transaction
        self.capped = bool(meta.options.get("capped"))
        self.capped_totals = None  # [documents, bytes], counted when first needed
        self.refresh()

    def refresh(self) -> None:
        """Recompile after the catalog entry changed (index added/dropped, options changed)."""
        self.indexes = [IndexRuntime(ix, self.meta.ns) for ix in self.meta.indexes]
        self.index_map = IndexMap(self.meta.indexes)
        self._validator = None

    @property
    def id_index(self) -> Optional[IndexRuntime]:
        for ix in self.indexes:
            if ix.meta.is_id:
                return ix
        return None

    def index(self, name: str) -> Optional[IndexRuntime]:
        for ix in self.indexes:
            if ix.meta.name == name:
                return ix
        return None

    def alloc_rid(self) -> int:
        rid = self.next_rid
        self.next_rid += 1
        return rid

    def record_key(self, rid: int) -> bytes:
        return self.record_prefix + layout.rid_bytes(rid)


class Engine:
    """Owns the KV engine, the catalog and every collection. Thread-safe; one per data directory.

    Writers serialise on `lock` (one storage write transaction at a time, which is also what
    makes read-modify-write operations like $inc and findAndModify atomic); readers run
    concurrently on their own short read transactions.
    """

    def __init__(self, kv: KVEngine, *, ttl_interval: float = 60.0) -> None:
        self.kv = kv
        self.lock = threading.RLock()
        self.catalog = Catalog()
        self.cursors = CursorManager()
        self._states: dict[tuple[str, str], CollectionState] = {}
        self._closed = False
        with kv.begin(write=True) as txn:
            self.catalog.load(txn)
        from .ttl import TTLMonitor
        self._ttl = TTLMonitor(self, ttl_interval) if ttl_interval > 0 else None

    @classmethod
    def open(cls, path: Optional[str] = None, *, ttl_interval: float = 60.0, **options) -> "Engine":
        """LMDB at `path` (created if needed), or in-memory when `path` is None."""
        return cls(open_engine(path, **options), ttl_interval=ttl_interval)

    @property
    def durable(self) -> bool:
        return self.kv.durable

    # ------------------------------------------------------------------ collections
    def collection(self, db: str, name: str) -> Optional[CollectionState]:
        """The runtime state of an existing collection, or None."""
        key = (db, name)
        state = self._states.get(key)
        meta = self.catalog.get(db, name)
        if meta is None:
            return None
        if state is None or state.meta is not meta:
            state = CollectionState(meta, self._next_rid(meta.id))
            self._states[key] = state
        return state

    def _next_rid(self, coll_id: int) -> int:
        prefix = layout.record_prefix(coll_id)
        with self.kv.begin() as txn:
            for key, _ in txn.scan(prefix, prefix_end(prefix), reverse=True):
                return layout.rid_of_record_key(key) + 1
        return 1

    def forget(self, db: str, name: str) -> None:
        self._states.pop((db, name), None)

    # ------------------------------------------------------------------ transactions
    @contextmanager
    def write(self) -> Iterator:
        """A storage write transaction under the engine lock; on failure the catalog is reloaded
        so that no in-memory change survives a rolled-back transaction."""
        with self.lock:
            txn = self.kv.begin(write=True)
            try:
                yield txn
            except BaseException:
                txn.abort()
                self._reload_catalog()
                raise
            else:
                txn.commit()
                self._settle_counts()

    def _settle_counts(self) -> None:
        """After a commit, fold each collection's pending inserts/deletes into its count."""
        for state in self._states.values():
            if state.pending:
                if state.count is not None:
                    state.count += state.pending
                state.pending = 0

    def _reload_catalog(self) -> None:
        self.catalog = Catalog()
        with self.kv.begin() as txn:
            self.catalog.load(txn)
        self._states.clear()

    def reader(self, txn=None) -> Reader:
        """Reads for one operation: inside `txn` when given (a writer's own view), else batch-wise."""
        return Reader(self.kv, txn)

    def sync(self) -> None:
        self.kv.sync()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            if self._ttl is not None:
                self._ttl.stop()
            self.cursors.close_all()
            with self.lock:
                self.kv.close()
