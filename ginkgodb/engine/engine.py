"""The engine of one data directory (or of one in-memory database set)."""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Optional, Protocol

from ..storage import KVEngine, open_engine
from . import layout
from .batch import WriteBatch
from .catalog import Catalog
from .chunked_reader import ChunkedReader
from .clock import LogicalClock
from .collection import Collection
from .commit_signal import CommitSignal
from .conflicts import ConflictTable
from .cursors import CursorManager
from .known_numbers import KnownNumbers
from .operations import EngineOperations
from .plan_cache import PlanCaches
from .sessions import SessionCatalog

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

    def __init__(self, kv: KVEngine, *, ttl_interval: Optional[float] = None, oplog: Optional[bool] = None,
                 oplog_bytes: Optional[int] = None, compression: str = "none") -> None:
        """`ttl_interval`: seconds between TTL passes (None: follow ttlMonitorSleepSecs; 0: none).
        `oplog` None follows the GINKGODB_OPLOG environment switch (on unless "off");
        `oplog_bytes` None gives a new oplog its default size (docs/design/oplog.md);
        `compression`: the codec of collections created without one (record_format.CODECS)."""
        from .oplog import Oplog, default_size, enabled_by_default
        from .record_format import check_codec
        self.kv = kv
        self.default_compression = check_codec(compression, "storageCompression")
        self.lock = threading.RLock()
        self.cursors = CursorManager()
        self.observers: list[BatchObserver] = []
        self.clock = LogicalClock()
        self.conflicts = ConflictTable()
        self.sessions = SessionCatalog(self)
        from .snapshot_reads import SnapshotReads
        self.snapshot_reads = SnapshotReads(self)
        #: other processes may commit to the same data directory (docs/design/multiprocess.md)
        self.shared = kv.shared
        #: bumped after every committed batch: awaitData cursors wait on it (and poll the
        #: storage for other processes' commits when shared)
        self.commit_signal = CommitSignal(kv.commit_stamp if kv.shared else None)
        self._recent: dict[int, Catalog] = {}
        #: the collections' numbers as the last commit left them (known_numbers.py)
        self._known_numbers = KnownNumbers(kv.shared)
        self._publishing = threading.Lock()
        self._published = Catalog().freeze()
        #: (data version, catalog generation) of the last snapshot read for its generation: a
        #: snapshot of the same version holds the same generation (catalog_for)
        self._version_gen: tuple[Optional[int], int] = (None, 0)
        self._closed = False
        self._fsync_locks = 0
        self._unlocked = threading.Condition()
        self._held_by: Optional[int] = None   # the thread holding writes for a loop command
        from .index_usage import IndexUsage
        #: $indexStats accesses, persisted at close (index_usage.py)
        self.index_usage = IndexUsage()
        #: the plans the multi-planner chose, per query shape, and the index filters (plan_cache.py)
        self.plan_caches = PlanCaches()
        with kv.writer(reclaims=True) as txn:  # opening must work on a full disk (reads do)
            if txn.get(layout.META_FORMAT) is None:
                txn.put(layout.META_FORMAT, layout.pack_u64(layout.FORMAT_VERSION))
            self._publish(Catalog.load(txn))
            self.index_usage.load(txn)
            from .query_stats import QueryStats
            #: $queryStats and top: per query shape and namespace, kept at close (query_stats.py)
            self.query_stats = QueryStats()
            self.query_stats.load(txn.get(layout.META_QUERY_STATS))
        if oplog_bytes is None:
            oplog_bytes = default_size(kv.path if kv.durable else None, server=False)
        self.oplog = Oplog(self, oplog_bytes, enabled=enabled_by_default() if oplog is None else oplog)
        self.oplog.open()
        if self.oplog.enabled:
            self.observers.insert(0, self.oplog)   # first: later observers see the batch's commit_ts
        from .ttl import TTLMonitor
        self._ttl = TTLMonitor(self, ttl_interval) if ttl_interval is None or ttl_interval > 0 else None
        from .text_build import TextIndexBuilder
        #: background text index builds (text_build.py): resumes those a crash interrupted
        self.text_builder = TextIndexBuilder(self)
        self.observers.append(self.text_builder)

    @classmethod
    def open(cls, path: Optional[str] = None, *, ttl_interval: Optional[float] = None, oplog: Optional[bool] = None,
             oplog_bytes: Optional[int] = None, compression: str = "none", **options: Any) -> Engine:
        """LMDB at `path` (created if needed), or in-memory when `path` is None."""
        from .record_format import check_codec
        check_codec(compression, "storageCompression")   # before the data directory is opened
        return cls(open_engine(path, **options), ttl_interval=ttl_interval, oplog=oplog,
                   oplog_bytes=oplog_bytes, compression=compression)

    @property
    def durable(self) -> bool:
        return self.kv.durable

    # ------------------------------------------------------------------ the published catalog
    @property
    def catalog(self) -> Catalog:
        """The latest committed catalog (read-only): when other processes share the data
        directory, the one a new snapshot holds (one probe of its generation)."""
        if self.shared and not self._closed:
            snap = self.kv.snapshot()
            try:
                return self.catalog_for(snap)
            finally:
                snap.release()
        return self._published

    def collection(self, db: str, name: str) -> Optional[Collection]:
        """The handle of an existing collection in the latest committed catalog, or None."""
        return self.catalog.collection(db, name)

    def _publish(self, catalog: Catalog) -> None:
        """Make `catalog` the latest one, unless a newer generation already is (a reader that
        loaded another process's catalog races this process's writers)."""
        catalog.freeze()
        with self._publishing:
            recent = self._recent
            recent[catalog.gen] = catalog
            while len(recent) > _RECENT_CATALOGS:
                del recent[min(recent)]
            if catalog.gen >= self._published.gen:
                self._published = catalog

    def catalog_for(self, snap: Any) -> Catalog:
        """The catalog of the generation `snap` holds: consistent with its data."""
        published = self._published
        version = snap.data_version()    # one committed state holds one generation: read it once
        seen = self._version_gen
        if version is not None and seen[0] == version:
            gen = seen[1]
        else:
            gen = layout.stored_catalog_gen(snap)
            if version is not None:
                self._version_gen = (version, gen)
        if gen == published.gen:
            return published
        known = self._recent.get(gen)
        if known is not None:
            return known
        catalog = Catalog.load(snap)  # another process changed it, or it is older than we keep
        if gen > published.gen:
            self._publish(catalog)    # the newest: every later reader of it finds it
        return catalog

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

    # ------------------------------------------------------------------ fsyncLock
    @property
    def fsync_locked(self) -> bool:
        return self._fsync_locks > 0

    def fsync_lock(self) -> int:
        """fsync with lock: block every later write, wait for the one in flight, flush; returns
        the lock count (each lock needs its own unlock, as in mongod)."""
        with self._unlocked:
            self._fsync_locks += 1
            count = self._fsync_locks
        with self.lock:  # the batch in flight, if any, commits first
            self.kv.sync()
        return count

    def fsync_unlock(self) -> Optional[int]:
        """The lock count left after one unlock, or None when not locked."""
        with self._unlocked:
            if not self._fsync_locks:
                return None
            self._fsync_locks -= 1
            if not self._fsync_locks:
                self._unlocked.notify_all()
            return self._fsync_locks

    def wait_writable(self, check: Optional[Callable[[], None]] = None) -> None:
        """Wait while fsync-locked; `check` (an operation's interrupt check) may raise meanwhile.
        A thread holding writes (`hold_writes`) is the writer in flight: the lock waits for it."""
        if self._held_by == threading.get_ident():
            return
        with self._unlocked:
            while self._fsync_locks and not self._closed:
                if check is not None:
                    check()
                self._unlocked.wait(0.05)

    def hold_writes(self) -> bool:
        """Take the write lock without waiting, for a short command the server runs on its event
        loop (engine/no_wait.py); False when another writer holds it, an fsync lock holds writes
        back, or other processes share the storage (their writer lock cannot be tried). While
        held, this thread's write batches take it again at once. `release_writes` ends it."""
        if self.shared or self._fsync_locks or not self.lock.acquire(blocking=False):
            return False
        if self._fsync_locks or self._closed:
            self.lock.release()
            return False
        self._held_by = threading.get_ident()
        return True

    def release_writes(self) -> None:
        self._held_by = None
        self.lock.release()

    def _acquire_for_write(self) -> None:
        """The engine lock, once no fsync lock holds writes back (checked again under the lock:
        fsync_lock takes it to wait for the writer in flight)."""
        if self._held_by == threading.get_ident():
            self.lock.acquire()   # held already (hold_writes): the writer in flight
            return
        while True:
            if self._fsync_locks:
                self.wait_writable()
            self.lock.acquire()
            if not self._fsync_locks or self._closed:
                return
            self.lock.release()

    # ------------------------------------------------------------------ writes
    def write(self, reclaims: bool = False) -> _Writing:
        """A write batch under the engine lock, committed when the block ends without error and
        rolled back, leaving no trace, when it raises. `reclaims`: the batch only deletes
        (documents, collections, indexes), so storage runs it even when the disk is full.
        While fsync-locked, writes wait for the unlock."""
        return _Writing(self, reclaims)

    def _begin_batch(self, reclaims: bool) -> WriteBatch:
        """A batch on a new storage write transaction (the engine lock held)."""
        txn = self.kv.writer(reclaims=reclaims)
        try:
            batch = WriteBatch(txn, self._published, self.conflicts)
            batch.default_compression, batch.compresses = self.default_compression, self.kv.durable
            if not self._known_numbers.begin(batch):
                catalog = self.catalog_for(txn)   # the writer's view: another process may have moved it
                if catalog.gen > self._published.gen:
                    self._publish(catalog)
                batch._base_catalog = catalog
        except BaseException:
            txn.abort()
            raise
        return batch

    def _commit_batch(self, batch: WriteBatch) -> None:
        """Commit the batch's storage transaction (rolled back, leaving no trace, if any step
        fails), then publish what it changed and tell the observers."""
        txn = batch.txn
        try:
            if batch.ops:
                batch.commit_ts = self.clock.tick()
            for observer in self.observers:
                observer.before_commit(batch)
            batch.prepare()  # after the observers: the oplog moves its collection's numbers
            changed = batch._catalog   # the batch's own catalog, when it changed any (catalog_changed)
            if changed is not None:
                # known before the commit: a reader whose snapshot already holds the new
                # generation finds its catalog here (never a half-published state)
                self._recent[changed.gen] = changed.freeze()
            txn.commit()
        except BaseException:
            self._abort_batch(batch)
            self._known_numbers.forget()   # a failure after storage's commit: it may have happened
            raise
        self._known_numbers.committed(batch)
        self.conflicts.committed(batch.claims)
        if changed is not None:
            self._publish(changed)
        for observer in self.observers:
            observer.after_commit(batch)
        if batch.commit_ts is not None:
            self.commit_signal.committed()

    def _abort_batch(self, batch: WriteBatch) -> None:
        batch.txn.abort()
        if batch.catalog_changed:
            self._recent.pop(batch.catalog.gen, None)

    @property
    def ttl_monitor_active(self) -> bool:
        """This process runs the TTL passes (the one among processes sharing the directory)."""
        return self._ttl is not None and self._ttl.active

    def reserve_rids(self, coll_id: int, n: int) -> int:
        """Advance a collection's persisted record-id counter by `n` (a transaction's range)."""
        from .transactions import reserve_rids
        return reserve_rids(self, coll_id, n)

    def reserve_ids(self, n: int) -> int:
        from .transactions import reserve_ids
        return reserve_ids(self, n)

    def sync(self) -> None:
        self.kv.sync()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            with self._unlocked:
                self._unlocked.notify_all()  # writers held by an fsync lock give up
            if self._ttl is not None:
                self._ttl.stop()
            self.text_builder.stop()
            self.sessions.stop()
            self.snapshot_reads.close()
            self.cursors.close_all()
            self.commit_signal.wake_all()
            with self.lock:
                self._flush_index_usage()
                self.kv.close()

    def _flush_index_usage(self) -> None:
        """Persist the $indexStats counters, $queryStats and top (a failure, e.g. a full disk, loses
        them, never the close)."""
        import logging
        live = {ix.id for meta in self._published.all() for ix in meta.indexes}
        try:
            with self.kv.writer(reclaims=True) as txn:
                self.index_usage.flush(txn, live)
                txn.put(layout.META_QUERY_STATS, self.query_stats.dump())
        except Exception:
            logging.getLogger("ginkgodb.engine").exception("cannot persist the index access counters")


class _Writing:
    """Engine.write's block: the engine lock, a batch, its commit or rollback (a class, not a
    generator: every write enters it, and this costs half as much)."""

    __slots__ = ("_engine", "_reclaims", "_batch")

    def __init__(self, engine: Engine, reclaims: bool) -> None:
        self._engine = engine
        self._reclaims = reclaims

    def __enter__(self) -> WriteBatch:
        engine = self._engine
        engine._acquire_for_write()
        try:
            batch = self._batch = engine._begin_batch(self._reclaims)
        except BaseException:
            engine.lock.release()
            raise
        return batch

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        engine = self._engine
        try:
            if kind is None:
                engine._commit_batch(self._batch)
            else:
                engine._abort_batch(self._batch)
        finally:
            engine.lock.release()
