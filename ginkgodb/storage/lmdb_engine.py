"""LMDB engine: the durable default. One environment per data directory, opened once.

Durability: the environment is opened without a sync at every commit, so a committed write
reaches the file through write(2) before it is acknowledged; it survives the death of the process
(kill -9) at once, and a power cut once the periodic flusher (every `sync_interval` seconds) or an
explicit `sync()` (a `j: true` write) has run. LMDB keeps its copy-on-write B+tree consistent
either way: a crash loses at most unsynced transactions, never half of one.

Who may share a data directory: the process holds a flock(2) on `data.mdb` itself for as long
as the environment is open, exclusive for a server (`shared=False`, the default) and shared for
embedded clients (`shared=True`), so several embedded processes open one directory together
(LMDB serialises their writers and gives each reader its snapshot) while a server and anything
else keep each other out. Unlike a separate lock file, the lock cannot be removed from under a
running process: deleting `ginkgodb.lock` (locked the same way, for older versions, which take
it exclusively) lets no one in. A BSD lock belongs to our own open file description, so LMDB
opening and closing its own descriptors of the same file never releases it (POSIX fcntl locks
would be). Files are created owner-only (0600, the directory 0700), as mongod does. Sharing
processes: docs/design/multiprocess.md.
"""
from __future__ import annotations

import fcntl
import os
import threading
import weakref
from collections.abc import Iterator
from typing import Any, Optional

import lmdb

from ..errors import StorageError
from .disk_space import DEFAULT_RESERVE, UNBOUNDED, Headroom, is_disk_error
from .kv import KVEngine, Snapshot, Txn

LOCK_FILE = "ginkgodb.lock"
DATA_FILE = "data.mdb"
FILE_MODE = 0o600
DIR_MODE = 0o700
DEFAULT_MAP_SIZE = 1 << 37  # address space reserved, not disk used: the file grows as needed
MAX_KEY_SIZE = 511  # LMDB's compiled-in limit
FORKED = ("the data directory was opened before this process was forked; an LMDB environment "
          "cannot be used across fork(), nor opened again in the child: close every client of it "
          "before forking, or open it only in the worker processes")


def _begin(engine: LmdbEngine, write: bool) -> lmdb.Transaction:
    """A transaction; when another process grew the map beyond ours (MDB_MAP_RESIZED), adopt
    its size and begin again."""
    try:
        return engine._env.begin(write=write, buffers=False)
    except lmdb.MapResizedError:
        engine._env.set_mapsize(0)   # 0: take the size the other process set
        return engine._env.begin(write=write, buffers=False)


class _LmdbReads:
    """get/scan/first over one LMDB transaction (reads of a snapshot and of the writer alike)."""

    _txn: lmdb.Transaction

    def get(self, key: bytes) -> Optional[bytes]:
        return self._txn.get(key)  # type: ignore[return-value]  # buffers=False: bytes

    def scan(self, lo: bytes, hi: Optional[bytes], reverse: bool = False) -> Iterator[tuple[bytes, bytes]]:
        cur: Any = self._txn.cursor()  # bytes keys and values (buffers=False)
        if not reverse:
            if not cur.set_range(lo):
                return
            for key, value in cur:
                if hi is not None and key >= hi:
                    return
                yield key, value
            return
        if hi is None:
            positioned = cur.last()
        elif cur.set_range(hi):
            positioned = cur.prev()
        else:
            positioned = cur.last()
        if not positioned:
            return
        for key, value in cur.iterprev():
            if key < lo:
                return
            yield key, value

    def get_many(self, keys: list[bytes]) -> list[Optional[bytes]]:
        return list(map(self._txn.get, keys))   # type: ignore[arg-type]  # buffers=False: bytes

    def keys_in_ranges(self, ranges: list[tuple[bytes, Optional[bytes]]]) -> list[bytes]:
        cur: Any = self._txn.cursor()   # one cursor for every range
        out: list[bytes] = []
        append = out.append
        for lo, hi in ranges:
            if not cur.set_range(lo):
                continue
            for key in cur.iternext(values=False):
                if hi is not None and key >= hi:
                    break
                append(key)
        return out

    def first(self, lo: bytes, hi: Optional[bytes]) -> Optional[bytes]:
        cur: Any = self._txn.cursor()
        if not cur.set_range(lo):
            return None
        key = cur.key()
        return key if hi is None or key < hi else None


class LmdbSnapshot(_LmdbReads, Snapshot):
    """A read transaction: LMDB's MVCC gives exactly the snapshot semantics of the contract."""

    def __init__(self, engine: LmdbEngine) -> None:
        try:  # _begin inlined: a snapshot per read is the hot path
            self._txn = engine._env.begin()   # read-only, bytes (not buffers): begin's defaults, unparsed
        except lmdb.MapResizedError:
            self._txn = _begin(engine, False)
        self._open = True
        #: this process's commit count when the snapshot began (commits_elsewhere_since)
        self.own_commits = engine._own_commits

    def data_version(self) -> Optional[int]:
        return self._txn.id()   # a read transaction's id is the snapshot it reads

    def release(self) -> None:
        if self._open:
            self._open = False
            self._txn.abort()


class LmdbTxn(_LmdbReads, Txn):
    #: what bounds the bytes this transaction may add to the data file (disk_space.after_commit):
    #: its puts and deletes, and the bytes of the values it put
    _changes = 0
    _value_bytes = 0

    def __init__(self, engine: LmdbEngine) -> None:
        self._engine = engine
        try:
            self._txn = engine._env.begin(write=True, buffers=False)
        except lmdb.MapResizedError:
            self._txn = _begin(engine, True)
        self._open = True

    def put(self, key: bytes, value: bytes) -> None:
        self._changes += 1
        self._value_bytes += len(value)
        try:
            self._txn.put(key, value)
        except lmdb.MapFullError as exc:
            raise StorageError("map_full", "data file reached its maximum size") from exc
        except lmdb.BadValsizeError as exc:
            raise StorageError("io", f"key of {len(key)} bytes exceeds the storage limit") from exc
        except lmdb.Error as exc:  # a large transaction spilling pages onto a full disk
            raise self._engine._headroom.commit_failed(exc) from exc

    def put_many(self, pairs) -> None:
        self._changes = UNBOUNDED   # not counted: the commit measures
        try:
            self._txn.cursor().putmulti(pairs)
        except lmdb.MapFullError as exc:
            raise StorageError("map_full", "data file reached its maximum size") from exc
        except lmdb.BadValsizeError as exc:
            raise StorageError("io", "a key exceeds the storage limit") from exc
        except lmdb.Error as exc:
            raise self._engine._headroom.commit_failed(exc) from exc

    def delete(self, key: bytes) -> bool:
        self._changes += 1
        try:
            return self._txn.delete(key)
        except lmdb.Error as exc:
            raise self._engine._headroom.commit_failed(exc) from exc

    def commit(self) -> None:
        if self._open:
            self._open = False
            txn_id = self._txn.id()
            try:
                self._txn.commit()
            except lmdb.Error as exc:  # LMDB aborted the transaction: nothing of it was written
                raise self._engine._headroom.commit_failed(exc) from exc
            engine = self._engine
            engine._own_commits += 1   # under the writer lock (LMDB's, across processes)
            engine._dirty = True
            engine._headroom.after_commit(self._changes, self._value_bytes, txn_id)

    def abort(self) -> None:
        if self._open:
            self._open = False
            self._txn.abort()

    def base_version(self) -> Optional[int]:
        return self._txn.id() - 1   # a writer's id is the last committed one's + 1


def _lock(fd: int, shared: bool = False) -> bool:
    """Take the process's exclusive (or shared) lock on an open file; False when a holder has
    it in a mode that excludes ours."""
    try:
        fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _make_directory(path: str) -> None:
    """Create the data directory owner-only; an existing one keeps the mode its owner chose."""
    if not os.path.isdir(path):
        os.makedirs(path, mode=DIR_MODE, exist_ok=True)
        os.chmod(path, DIR_MODE)  # makedirs applies the umask


def _open_locked(path: str, name: str, shared: bool) -> int:
    fd = os.open(os.path.join(path, name), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
    if not _lock(fd, shared):
        os.close(fd)
        if shared:
            raise StorageError("locked", f"data directory {path!r} is in use by a ginkgodb server (or another "
                                         "process holding it exclusively); embedded clients share a data "
                                         "directory only with other embedded clients")
        raise StorageError("locked", f"data directory {path!r} is in use by another ginkgodb process")
    return fd


def lock_directory(path: str) -> tuple[int, int]:
    """Take a data directory's exclusive lock without opening LMDB (the `serve --workers`
    supervisor, whose workers inherit the descriptors as `held_locks`); raises
    StorageError("locked") when another process holds it."""
    _make_directory(path)
    data = _open_locked(path, DATA_FILE, False)
    try:
        return data, _open_locked(path, LOCK_FILE, False)
    except BaseException:
        os.close(data)
        raise


def _held(fd: int) -> int:
    """An inherited descriptor whose open file already holds the exclusive lock: taking
    LOCK_EX again on the same open file succeeds at once (flock locks belong to it); a
    descriptor that does not hold it fails here instead of sharing the directory unlocked."""
    if not _lock(fd, False):
        raise StorageError("locked", "the inherited data-directory lock is not held by this process's supervisor")
    return fd


#: open environments, so that a forked child can tell its inherited ones apart (_after_fork)
_OPEN: weakref.WeakSet[LmdbEngine] = weakref.WeakSet()
#: environments a forked child inherited: marked closed and never closed there, because
#: mdb_env_close in the child frees the parent's reader slots (its snapshots would lose their
#: pages); py-lmdb makes inherited objects inert, so their deallocation touches nothing. LMDB
#: cannot open the same files twice in one process, so the child cannot reopen the directory.
_INHERITED: list[LmdbEngine] = []


def _after_fork() -> None:
    for engine in list(_OPEN):
        if not engine._closed:
            engine._closed = engine._forked = True
            engine._stop.set()
            _INHERITED.append(engine)
    _OPEN.clear()


os.register_at_fork(after_in_child=_after_fork)


class LmdbEngine(KVEngine):
    durable = True
    concurrent_readers = True
    _closed: bool
    _real: str
    _own_commits: int

    def __init__(self, path: str, *, map_size: int = DEFAULT_MAP_SIZE, sync_interval: float = 0.1,
                 reserve_bytes: int = DEFAULT_RESERVE, shared: bool = False,
                 held_locks: tuple[int, ...] = ()) -> None:
        """`shared`: other processes (embedded clients) may open the directory at the same time.
        `held_locks`: descriptors of the data file and the lock file that already hold the
        directory's exclusive lock, inherited from the supervising `serve --workers` process
        (docs/design/workers.md); the engine then locks nothing itself, and only its sibling
        workers, which hold the same locks, may share the directory (`shared` must be set)."""
        _make_directory(path)
        real = os.path.realpath(path)
        if any(other._real == real for other in _INHERITED):
            raise StorageError("locked", f"data directory {path!r} was open when this process was forked, and "
                                         "LMDB cannot open it again in the child: close every client of it "
                                         "before forking, or open it only in the worker processes")
        if any(not other._closed and other._real == real for other in list(_OPEN)):
            raise StorageError("locked", f"data directory {path!r} is in use: already open in this process "
                                         "(LMDB allows one environment per directory per process: share its "
                                         "engine)")
        self.path = path
        self._dir = path
        self._real = real
        self.shared = shared
        self._forked = False
        self._own_commits = 0
        self._lock_fds: list[int] = []
        self._locks_inherited = bool(held_locks)
        self._lease_fds: dict[str, int] = {}
        try:
            if held_locks:
                if not shared or len(held_locks) != 2:
                    raise ValueError("held_locks: the data file's and the lock file's descriptors, with shared=True")
                self._lock_fds.extend(_held(fd) for fd in held_locks)
            else:
                self._lock_fds.append(_open_locked(path, DATA_FILE, shared))   # the lock that matters
                self._lock_fds.append(_open_locked(path, LOCK_FILE, shared))   # what older versions check
            self._env = lmdb.open(path, map_size=map_size, subdir=True, max_dbs=0, sync=False,
                                  metasync=False, writemap=False, readahead=False, max_readers=512,
                                  lock=True, mode=FILE_MODE)
            if shared:
                self._env.reader_check()   # free the reader slots of processes that died
        except lmdb.Error as exc:
            self._release_locks()
            raise StorageError("corrupt", f"cannot open data directory {path!r}: {exc}") from exc
        except BaseException:
            self._release_locks()
            raise
        self._headroom = Headroom(self._lock_fds[0], self._env, reserve_bytes)
        self._dirty = False
        self._closed = False
        self._stop = threading.Event()
        _OPEN.add(self)
        self._flusher: Optional[threading.Thread] = None
        if sync_interval > 0:
            self._flusher = threading.Thread(target=self._flush_loop, args=(sync_interval,),
                                             name="ginkgodb-flusher", daemon=True)
            self._flusher.start()

    def _flush_loop(self, interval: float) -> None:
        while not self._stop.wait(interval):
            if self._dirty:
                self._dirty = False
                try:
                    self._env.sync(True)
                except lmdb.Error as exc:
                    if self._closed:
                        return  # environment closed under us
                    self._dirty = is_disk_error(exc)  # out of space: try again next time

    def _refuse_closed(self) -> StorageError:
        return StorageError("closed", FORKED if self._forked else "engine is closed")

    def snapshot(self) -> Snapshot:
        if self._closed:
            raise self._refuse_closed()
        return LmdbSnapshot(self)

    def writer(self, reclaims: bool = False) -> Txn:
        if self._closed:
            raise self._refuse_closed()
        self._headroom.admit(reclaims)
        return LmdbTxn(self)

    # -- sharing the directory with other processes (docs/design/multiprocess.md) ---------------
    def commits_elsewhere_since(self, snap: Snapshot, txn: Txn) -> bool:
        """Did another process commit between `snap` and the write transaction `txn`? (exact
        when False; True may also mean "could not tell")."""
        if not self.shared:
            return False
        if not isinstance(snap, LmdbSnapshot) or not isinstance(txn, LmdbTxn):
            return True
        between = txn._txn.id() - 1 - snap._txn.id()      # commits after the snapshot, anyone's
        return between > self._own_commits - snap.own_commits

    def commit_stamp(self) -> int:
        """The id of the newest committed transaction, whichever process committed it."""
        if self._closed:
            return -1
        return int(self._env.info()["last_txnid"])

    def lease(self, name: str) -> bool:
        """Hold (or take, when its holder is gone) the directory-wide lease `name`: True for the
        one process that holds it. The lease is an exclusive flock on the file `name` in the
        data directory (shared engines only), released when this engine closes or the process dies."""
        if not self.shared or name in self._lease_fds:
            return True   # an exclusive engine is the only process: it holds every lease
        if self._closed:
            return False
        fd = os.open(os.path.join(self._dir, name), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
        if not _lock(fd):
            os.close(fd)
            return False
        self._lease_fds[name] = fd
        return True

    @property
    def disk_full(self) -> bool:
        """Within a low-space episode (writes that grow the data may be refused)."""
        return self._headroom.low

    def sync(self) -> None:
        self._dirty = False
        self._env.sync(True)

    def size_on_disk(self) -> int:
        """Bytes of the data file in use (the preallocated reserve past them not counted)."""
        if self._closed:
            return 0
        return self._headroom.used_bytes()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        _OPEN.discard(self)
        self._stop.set()
        if self._flusher is not None:
            self._flusher.join()
        self._env.sync(True)
        self._env.close()
        self._release_locks()

    def _release_locks(self) -> None:
        for fd in self._lease_fds.values():
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        self._lease_fds.clear()
        for fd in self._lock_fds:
            if not self._locks_inherited:   # an inherited lock is the supervisor's: only let go of it
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        self._lock_fds.clear()
