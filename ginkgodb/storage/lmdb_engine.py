"""LMDB engine: the durable default. One environment per data directory, opened once.

Durability: the environment is opened without a sync at every commit, so a committed write
reaches the file through write(2) before it is acknowledged; it survives the death of the process
(kill -9) at once, and a power cut once the periodic flusher (every `sync_interval` seconds) or an
explicit `sync()` (a `j: true` write) has run. LMDB keeps its copy-on-write B+tree consistent
either way: a crash loses at most unsynced transactions, never half of one.

One process per data directory: the process holds an exclusive flock(2) on `data.mdb` itself
for as long as the environment is open. Unlike a separate lock file, it cannot be removed from
under a running server: deleting `ginkgodb.lock` (still locked too, for older versions) lets no
second server in. A BSD lock belongs to our own open file description, so LMDB opening and
closing its own descriptors of the same file never releases it (POSIX fcntl locks would be).
Files are created owner-only (0600, the directory 0700), as mongod does.
"""
from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterator
from typing import Any, Optional

import lmdb

from ..errors import StorageError
from .disk_space import DEFAULT_RESERVE, Headroom, is_disk_error
from .kv import KVEngine, Snapshot, Txn

LOCK_FILE = "ginkgodb.lock"
DATA_FILE = "data.mdb"
FILE_MODE = 0o600
DIR_MODE = 0o700
DEFAULT_MAP_SIZE = 1 << 37  # address space reserved, not disk used: the file grows as needed
MAX_KEY_SIZE = 511  # LMDB's compiled-in limit


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

    def first(self, lo: bytes, hi: Optional[bytes]) -> Optional[bytes]:
        cur: Any = self._txn.cursor()
        if not cur.set_range(lo):
            return None
        key = cur.key()
        return key if hi is None or key < hi else None


class LmdbSnapshot(_LmdbReads, Snapshot):
    """A read transaction: LMDB's MVCC gives exactly the snapshot semantics of the contract."""

    def __init__(self, engine: LmdbEngine) -> None:
        self._txn = engine._env.begin(write=False, buffers=False)
        self._open = True

    def release(self) -> None:
        if self._open:
            self._open = False
            self._txn.abort()


class LmdbTxn(_LmdbReads, Txn):
    def __init__(self, engine: LmdbEngine) -> None:
        self._engine = engine
        self._txn = engine._env.begin(write=True, buffers=False)
        self._open = True

    def put(self, key: bytes, value: bytes) -> None:
        try:
            self._txn.put(key, value)
        except lmdb.MapFullError as exc:
            raise StorageError("map_full", "data file reached its maximum size") from exc
        except lmdb.BadValsizeError as exc:
            raise StorageError("io", f"key of {len(key)} bytes exceeds the storage limit") from exc
        except lmdb.Error as exc:  # a large transaction spilling pages onto a full disk
            raise self._engine._headroom.commit_failed(exc) from exc

    def put_many(self, pairs) -> None:
        try:
            self._txn.cursor().putmulti(pairs)
        except lmdb.MapFullError as exc:
            raise StorageError("map_full", "data file reached its maximum size") from exc
        except lmdb.BadValsizeError as exc:
            raise StorageError("io", "a key exceeds the storage limit") from exc
        except lmdb.Error as exc:
            raise self._engine._headroom.commit_failed(exc) from exc

    def delete(self, key: bytes) -> bool:
        try:
            return self._txn.delete(key)
        except lmdb.Error as exc:
            raise self._engine._headroom.commit_failed(exc) from exc

    def commit(self) -> None:
        if self._open:
            self._open = False
            try:
                self._txn.commit()
            except lmdb.Error as exc:  # LMDB aborted the transaction: nothing of it was written
                raise self._engine._headroom.commit_failed(exc) from exc
            self._engine._dirty = True
            self._engine._headroom.after_commit()

    def abort(self) -> None:
        if self._open:
            self._open = False
            self._txn.abort()


def _lock_exclusively(fd: int) -> bool:
    """Take the process's exclusive lock on an open file; False when another holder has it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _make_directory(path: str) -> None:
    """Create the data directory owner-only; an existing one keeps the mode its owner chose."""
    if not os.path.isdir(path):
        os.makedirs(path, mode=DIR_MODE, exist_ok=True)
        os.chmod(path, DIR_MODE)  # makedirs applies the umask


def _open_locked(path: str, name: str) -> int:
    fd = os.open(os.path.join(path, name), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
    if not _lock_exclusively(fd):
        os.close(fd)
        raise StorageError("locked", f"data directory {path!r} is in use by another ginkgodb process")
    return fd


class LmdbEngine(KVEngine):
    durable = True
    concurrent_readers = True

    def __init__(self, path: str, *, map_size: int = DEFAULT_MAP_SIZE, sync_interval: float = 0.1,
                 reserve_bytes: int = DEFAULT_RESERVE) -> None:
        _make_directory(path)
        self.path = path
        self._dir = path
        self._lock_fds: list[int] = []
        try:
            self._lock_fds.append(_open_locked(path, DATA_FILE))   # the lock that matters
            self._lock_fds.append(_open_locked(path, LOCK_FILE))   # what older versions check
            self._env = lmdb.open(path, map_size=map_size, subdir=True, max_dbs=0, sync=False,
                                  metasync=False, writemap=False, readahead=False, max_readers=512,
                                  lock=True, mode=FILE_MODE)
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

    def snapshot(self) -> Snapshot:
        if self._closed:
            raise StorageError("closed", "engine is closed")
        return LmdbSnapshot(self)

    def writer(self, reclaims: bool = False) -> Txn:
        if self._closed:
            raise StorageError("closed", "engine is closed")
        self._headroom.admit(reclaims)
        return LmdbTxn(self)

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
        self._stop.set()
        if self._flusher is not None:
            self._flusher.join()
        self._env.sync(True)
        self._env.close()
        self._release_locks()

    def _release_locks(self) -> None:
        for fd in self._lock_fds:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        self._lock_fds.clear()
