"""The engine of one data directory (or of one in-memory database set)."""
from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Optional, Protocol

from ..storage import KVEngine, open_engine
from . import layout
from .batch import WriteBatch
from .catalog import Catalog
from .chunked_reader import ChunkedReader
from .collection import Collection
from .cursors import CursorManager
from .operations import EngineOperations

#: catalogs of recent generations kept for readers whose snapshot is a little behind
_RECENT_CATALOGS = 8


class BatchObserver(Protocol):
    """Consumers of committed changes (the oplog, change streams). `before_commit` runs inside
    the batch's storage transaction and may write to it; `after_commit` after it is durable."""

    def before_commit(self, batch: WriteBatch) -> None: ...
    def after_commit(self, batch: WriteBatch) -> None: ...


class ReadView:
    """A snapshot and the catalog of the same generation: what one read operation sees."""

    __slots__ = ("snapshot", "catalog")

    def __init__(self, snapshot: Any, catalog: Catalog) -> None:
        self.snapshot, self.catalog = snapshot, catalog

    def collection(self, db: str, name: str) -> Optional[Collection]:
        return self.catalog.collection(db, name)

    def release(self) -> None:
        self.snapshot.release()

    def __enter__(self) -> ReadView:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()


class Engine(EngineOperations):
    """Owns the KV engine, the published catalog and the cursors. Thread-safe; one per data
    directory.

    Writers serialise on `lock` (one storage write transaction at a time, which is also what
    makes read-modify-write operations like $inc and findAndModify atomic); readers run
    concurrently on snapshots and never wait for writers.
    """

    def __init__(self, kv: KVEngine, *, ttl_interval: Optional[float] = None) -> None:
        """`ttl_interval`: seconds between TTL passes (None: follow ttlMonitorSleepSecs; 0: none)."""
        self.kv = kv
        self.lock = threading.RLock()
        self.cursors = CursorManager()
        self.observers: list[BatchObserver] = []
        self._recent: dict[int, Catalog] = {}
        self._closed = False
        with kv.writer() as txn:
            if txn.get(layout.META_FORMAT) is None:
                txn.put(layout.META_FORMAT, layout.pack_u64(layout.FORMAT_VERSION))
            self._publish(Catalog.load(txn))
        from .ttl import TTLMonitor
        self._ttl = TTLMonitor(self, ttl_interval) if ttl_interval is None or ttl_interval > 0 else None

    @classmethod
    def open(cls, path: Optional[str] = None, *, ttl_interval: Optional[float] = None, **options: Any) -> Engine:
        """LMDB at `path` (created if needed), or in-memory when `path` is None."""
        return cls(open_engine(path, **options), ttl_interval=ttl_interval)

    @property
    def durable(self) -> bool:
        return self.kv.durable

    # ------------------------------------------------------------------ the published catalog
    @property
    def catalog(self) -> Catalog:
        """The latest committed catalog (read-only)."""
        return self._published

    def collection(self, db: str, name: str) -> Optional[Collection]:
        """The handle of an existing collection in the latest committed catalog, or None."""
        return self._published.collection(db, name)

    def _publish(self, catalog: Catalog) -> None:
        catalog.freeze()
        recent = self._recent
        recent[catalog.gen] = catalog
        while len(recent) > _RECENT_CATALOGS:
            del recent[min(recent)]
        self._published = catalog

    def catalog_for(self, snap: Any) -> Catalog:
        """The catalog of the generation `snap` holds: consistent with its data."""
        published = self._published
        gen = layout.stored_catalog_gen(snap)
        if gen == published.gen:
            return published
        known = self._recent.get(gen)
        if known is not None:
            return known
        return Catalog.load(snap)  # another process changed it, or it is older than we keep

    # ------------------------------------------------------------------ reads
    def read(self) -> ReadView:
        """A snapshot with its catalog, for one read operation."""
        snap = self.kv.snapshot()
        try:
            return ReadView(snap, self.catalog_for(snap))
        except BaseException:
            snap.release()
            raise

    def reader(self, txn: Any = None) -> ChunkedReader:
        """Reads for one cursor: inside `txn` when given (a writer's own view), else on a new
        snapshot per batch."""
        return ChunkedReader(self, txn)

    # ------------------------------------------------------------------ writes
    @contextmanager
    def write(self) -> Iterator[WriteBatch]:
        """A write batch under the engine lock, committed when the block ends without error and
        rolled back, leaving no trace, when it raises."""
        with self.lock:
            txn = self.kv.writer()
            batch: Optional[WriteBatch] = None
            try:
                catalog = self.catalog_for(txn)
                if catalog is not self._published:  # another process changed the catalog
                    self._publish(catalog)
                batch = WriteBatch(txn, catalog)
                yield batch
                batch.prepare()
                for observer in self.observers:
                    observer.before_commit(batch)
                if batch.catalog_changed:
                    # known before the commit: a reader whose snapshot already holds the new
                    # generation finds its catalog here (never a half-published state)
                    self._recent[batch.catalog.gen] = batch.catalog.freeze()
                txn.commit()
            except BaseException:
                txn.abort()
                if batch is not None and batch.catalog_changed:
                    self._recent.pop(batch.catalog.gen, None)
                raise
            if batch.catalog_changed:
                self._publish(batch.catalog)
            for observer in self.observers:
                observer.after_commit(batch)

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
