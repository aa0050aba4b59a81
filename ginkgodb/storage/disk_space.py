"""Disk headroom for the LMDB data file: a full disk refuses writes cleanly and never blocks the
deletes and drops that would free it.

LMDB grows `data.mdb` by writing pages past its end, so on a full filesystem every commit fails
(ENOSPC, or EIO on a short write) and so do deletes, whose copy-on-write pages need room too.
`Headroom` keeps `reserve` bytes preallocated (fallocate) past the last used page. When topping
it up fails the engine enters a low-space episode, logged once: writes that would grow the data
are refused with the `disk_full` storage error (OutOfDiskSpace, 14031) while the headroom (the
preallocated tail plus LMDB's own free pages) is below the reserve; writes that reclaim space
(deletes, drops) always run, on the reserve. The episode ends, logged once, as soon as the
reserve can be preallocated again (the filesystem got space back), and writes are admitted again
meanwhile whenever deletes inside the file have freed at least the reserve.
"""
from __future__ import annotations

import errno
import logging
import os
import threading
import time
from typing import Any

from ..errors import StorageError
from ..limits import DISK_RESERVE_MB

DEFAULT_RESERVE = DISK_RESERVE_MB * 1024 * 1024
#: while low on space, how often a refused write may retry preallocating (a syscall)
RETRY_INTERVAL = 0.2
_NO_SPACE = (errno.ENOSPC, errno.EDQUOT)
_META_PAGES = 2
#: pages one commit may add to the data file beside its changes': the free list's and the meta page
COMMIT_PAGES = 16
#: pages one put or delete may add beside its value's: its path copied (copy-on-write) and split
#: at every level, up to 11 levels (a billion keys of LMDB's largest size, 511 bytes, at 4 KiB
#: pages), a new root, and the free list's record of the pages it frees (8 bytes each)
CHANGE_PAGES = 24
#: a change count that always measures (a transaction that could not count its changes)
UNBOUNDED = 1 << 62

log = logging.getLogger("ginkgodb.storage")


def _event(level: int, log_id: int, msg: str, **attr: Any) -> None:
    """A mongod-shaped log line (the server's formatter reads the `mongo` extra)."""
    log.log(level, msg, extra={"mongo": ("STORAGE", log_id, "storage", attr)})


def is_disk_error(exc: BaseException) -> bool:
    """Whether an LMDB failure means the filesystem ran out of room (ENOSPC, or the EIO LMDB
    reports for a short write)."""
    text = str(exc)
    return type(exc).__name__ == "DiskError" or "No space left" in text or "Input/output error" in text \
        or "Disk quota exceeded" in text


class Headroom:
    """Preallocated room past the end of the data file, and the low-space episodes."""

    def __init__(self, fd: int, env: Any, reserve: int = DEFAULT_RESERVE) -> None:
        self._fd = fd
        self._env = env
        self.reserve = max(0, reserve)
        self._psize = env.stat()["psize"]
        self._guard = threading.Lock()
        self.low = False
        self.episodes = 0
        self._retry_at = 0.0
        self._preallocate = self.reserve > 0
        self._known_size = 0  # the file's size when last looked at (it only grows)
        #: bytes of growth the last measurement left room for above the reserve, and the bound
        #: of what commits added since: below it, no measurement (a system call) is needed
        self._room = 0
        self._unmeasured = 0
        self._last_txn = -2        # the id of the last transaction this process committed
        self._commit_pages = COMMIT_PAGES * self._psize
        self._change_pages = CHANGE_PAGES * self._psize
        if self._preallocate and not self.top_up():
            self._enter("no room to preallocate the reserve when the data directory was opened")

    # -- measurements -------------------------------------------------------------------------
    def _used_end(self) -> int:
        return (self._env.info()["last_pgno"] + 1) * self._psize

    def used_bytes(self) -> int:
        """The data file's size without the preallocated tail."""
        return min(os.fstat(self._fd).st_size, self._used_end())

    def _free_inside(self) -> int:
        """Bytes of pages LMDB can reuse without growing the file (an estimate: the free list's
        own pages count as free)."""
        stat = self._env.stat()
        used = stat["branch_pages"] + stat["leaf_pages"] + stat["overflow_pages"] + _META_PAGES
        return max(0, self._env.info()["last_pgno"] + 1 - used) * self._psize

    def available(self) -> int:
        """Bytes writes may use without the filesystem giving any more."""
        return max(0, os.fstat(self._fd).st_size - self._used_end()) + self._free_inside()

    # -- keeping the reserve ------------------------------------------------------------------
    def top_up(self, minimum_only: bool = False) -> bool:
        """Preallocate so that at least `reserve` bytes follow the last used page (a quarter more,
        so that this runs once per quarter reserve of growth); False when the disk is full."""
        if not self._preallocate:
            return True
        end = self._used_end()
        self._unmeasured = 0
        if self._known_size - end >= self.reserve:  # the common case: no system call
            self._room = self._known_size - end - self.reserve
            return True
        size = self._known_size = os.fstat(self._fd).st_size
        if size - end >= self.reserve:
            self._room = size - end - self.reserve
            return True
        targets = [end + self.reserve] if minimum_only else [end + self.reserve + self.reserve // 4,
                                                             end + self.reserve]
        for target in targets:
            try:
                os.posix_fallocate(self._fd, size, target - size)
            except OSError as exc:
                if exc.errno in _NO_SPACE:
                    continue
                if exc.errno in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
                    self._preallocate = False  # a filesystem without fallocate: no reserve
                    return True
                raise StorageError("io", f"cannot preallocate the data file: {exc}") from exc
            self._known_size = target
            self._room = target - end - self.reserve
            return True
        self._room = 0
        return False

    def after_commit(self, changes: int, value_bytes: int, txn_id: int) -> None:
        """Called under the writer after each commit: keep the reserve, or start an episode.
        `changes` and `value_bytes`: the commit's puts and deletes (UNBOUNDED when not counted)
        and its values' bytes, which bound what it may have added to the data file. `txn_id`:
        its transaction's id; when it follows the last one this process committed, no other
        process wrote the file in between, so the bounds of this process's commits since the
        last measurement bound the file's growth. While they fit in the room that measurement
        left above the reserve, the reserve is intact without measuring again (a measurement
        is about 9,000 instructions, 3% of an embedded insert_one)."""
        if not self._preallocate or self.low:
            return
        follows, self._last_txn = txn_id == self._last_txn + 1, txn_id
        if follows and changes < UNBOUNDED:
            unmeasured = self._unmeasured + changes * self._change_pages + value_bytes + self._commit_pages
            if unmeasured <= self._room:
                self._unmeasured = unmeasured
                return
        if not self.top_up():
            self._enter("the filesystem has no room left to preallocate the reserve")

    def admit(self, reclaims: bool) -> None:
        """Before a write transaction: refuse (disk_full) a write that would grow the data while
        the disk is full and less than the reserve is left; reclaiming writes always run."""
        if not self.low or reclaims:
            return
        with self._guard:
            now = time.monotonic()
            if now >= self._retry_at:
                self._retry_at = now + RETRY_INTERVAL
                if self.top_up(minimum_only=True):
                    self._leave()
                    return
            available = self.available()
        if available >= self.reserve:
            return  # deletes freed room inside the file: writes may use it, down to the reserve
        raise self.refusal(available)

    def refusal(self, available: int) -> StorageError:
        return StorageError("disk_full", f"No space left on device: {available} bytes available for the "
                                         f"data files, {self.reserve} required; writes are refused until "
                                         "space is freed (deletes and drops still run)")

    def commit_failed(self, exc: BaseException) -> StorageError:
        """A commit that hit a full disk: the episode starts (logged once) and the caller gets
        the disk_full error; anything else is an I/O error."""
        if not is_disk_error(exc):
            return StorageError("io", f"storage error: {exc}")
        self._enter(str(exc))
        return StorageError("disk_full", f"No space left on device: the write needed more than the "
                                         f"{self.available()} bytes available for the data files and was "
                                         "rolled back; writes are refused while less than "
                                         f"{self.reserve} bytes are left (deletes and drops still run)")

    # -- episodes -----------------------------------------------------------------------------
    def _enter(self, why: str) -> None:
        if self.low:
            return
        self.low = True
        self.episodes += 1
        self._retry_at = time.monotonic() + RETRY_INTERVAL
        _event(logging.WARNING, 22435, "Disk full: writes are refused until space is freed; reads, "
               "deletes and drops still run", reason=why, reserveBytes=self.reserve)

    def _leave(self) -> None:
        self.low = False
        _event(logging.INFO, 22430, "Disk space available again: writes are accepted",
               reserveBytes=self.reserve)
