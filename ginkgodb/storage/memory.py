"""In-memory engine: a sorted map with snapshots, for tests and `MongoClient()` without a path.

Multi-version reads, as LMDB gives them: the map holds the latest committed values and
`_version` counts commits. A snapshot is a version number. A commit that changes a key while an
older snapshot is live keeps the key's previous value in `_history` (key -> [(version that
changed it, value before)]), so that snapshot still reads what it saw; history older than every
live snapshot is dropped. The writer buffers its puts and deletes in a KeyBatch (reads see them
over the map) and applies them at commit under a short lock: readers never wait for a writer,
only for the moment a commit is applied.
"""
from __future__ import annotations

import heapq
import threading
from collections import Counter
from collections.abc import Iterator
from itertools import islice
from typing import Optional

from sortedcontainers import SortedDict

from ..errors import StorageError
from .batch import KeyBatch, OverlayTxn
from .kv import KVEngine, Snapshot, Txn

_CHUNK = 256
_FIRST_CHUNK = 16
_PRUNE_MIN = 1024


class MemorySnapshot(Snapshot):
    """The data as of commit `version`."""

    def __init__(self, engine: MemoryEngine, version: int, registered: bool = True) -> None:
        self._engine = engine
        self.version = version
        self._open = registered

    def get(self, key: bytes) -> Optional[bytes]:
        engine = self._engine
        with engine._lock:
            return engine._visible(key, self.version)

    def scan(self, lo: bytes, hi: Optional[bytes], reverse: bool = False) -> Iterator[tuple[bytes, bytes]]:
        engine = self._engine
        size = _FIRST_CHUNK   # short reads (probes, a limit) stay short; long ones grow
        while True:
            with engine._lock:
                items, last = engine._chunk(lo, hi, reverse, self.version, size)
            yield from items
            if last is None:
                return
            size = min(size * 4, _CHUNK)
            if reverse:
                hi = last
            else:
                lo = last + b"\x00"

    def first(self, lo: bytes, hi: Optional[bytes]) -> Optional[bytes]:
        for key, _ in self.scan(lo, hi):
            return key
        return None

    def get_many(self, keys: list[bytes]) -> list[Optional[bytes]]:
        engine = self._engine
        version = self.version
        with engine._lock:
            if version == engine._version or not engine._history:
                return list(map(engine._data.get, keys))   # as _visible reads the latest
            visible = engine._visible
            return [visible(key, version) for key in keys]

    def keys_in_ranges(self, ranges: list[tuple[bytes, Optional[bytes]]]) -> list[bytes]:
        engine = self._engine
        with engine._lock:
            # the latest version (or one no commit changed since): the map's keys are its keys
            if self.version == engine._version or not engine._history:
                irange = engine._data.irange
                out: list[bytes] = []
                for lo, hi in ranges:
                    out.extend(irange(lo, hi, inclusive=(True, False)))
                return out
        return super().keys_in_ranges(ranges)

    def data_version(self) -> Optional[int]:
        return self.version

    def release(self) -> None:
        if self._open:
            self._open = False
            self._engine._release(self.version)


class MemoryTxn(OverlayTxn):
    """The writer: a KeyBatch over a snapshot of the latest version, applied at commit."""

    def __init__(self, engine: MemoryEngine) -> None:
        engine._writer.acquire()
        try:
            # the writer's own view needs no history: no commit can happen while it is open
            super().__init__(MemorySnapshot(engine, engine._version, registered=False), KeyBatch())
        except BaseException:
            engine._writer.release()
            raise
        self._engine = engine
        self._open = True

    def put(self, key: bytes, value: bytes) -> None:
        assert self._open, "write after the transaction ended"
        self.batch.put(key, value)

    def put_many(self, pairs) -> None:
        assert self._open, "write after the transaction ended"
        self.batch.put_many(list(pairs))

    def delete(self, key: bytes) -> bool:
        assert self._open, "write after the transaction ended"
        return super().delete(key)

    def first(self, lo: bytes, hi: Optional[bytes]) -> Optional[bytes]:
        if not self.batch:
            return self.base.first(lo, hi)
        for key, _ in self.scan(lo, hi):
            return key
        return None

    def get_many(self, keys: list[bytes]) -> list[Optional[bytes]]:
        if not self.batch:
            return self.base.get_many(keys)
        return super().get_many(keys)

    def keys_in_ranges(self, ranges: list[tuple[bytes, Optional[bytes]]]) -> list[bytes]:
        if not self.batch:
            return self.base.keys_in_ranges(ranges)
        return super().keys_in_ranges(ranges)

    def commit(self) -> None:
        if self._open:
            self._open = False
            try:
                self._engine._apply(self.batch)
            finally:
                self._end()

    def abort(self) -> None:
        if self._open:
            self._open = False
            self._end()

    def _end(self) -> None:
        self.batch.clear()
        self.base.release()
        self._engine._writer.release()


class MemoryEngine(KVEngine):
    durable = False
    concurrent_readers = True

    def __init__(self) -> None:
        self._data: SortedDict = SortedDict()
        self._history: SortedDict = SortedDict()   # key -> [(version, value before or None)]
        self._version = 0
        self._live: Counter = Counter()             # snapshot version -> open snapshots
        self._lock = threading.Lock()               # guards the map, the history, the versions
        self._writer = threading.Lock()             # one write transaction at a time
        self._prune_at = _PRUNE_MIN
        self._closed = False

    def snapshot(self) -> Snapshot:
        if self._closed:
            raise StorageError("closed", "engine is closed")
        with self._lock:
            version = self._version
            self._live[version] += 1
        return MemorySnapshot(self, version)

    def writer(self, reclaims: bool = False) -> Txn:
        if self._closed:
            raise StorageError("closed", "engine is closed")
        return MemoryTxn(self)

    # -- under self._lock ------------------------------------------------------------------
    def _visible(self, key: bytes, version: int) -> Optional[bytes]:
        if version != self._version:
            changes = self._history.get(key)
            if changes:
                for changed_at, before in changes:
                    if changed_at > version:
                        return before
        return self._data.get(key)

    def _chunk(self, lo: bytes, hi: Optional[bytes], reverse: bool, version: int,
               size: int = _CHUNK):
        """Up to `size` visible pairs of [lo, hi) at `version`, and the last key examined (None
        when the range is exhausted)."""
        keys_now = self._data.irange(lo, hi, inclusive=(True, False), reverse=reverse)
        if version != self._version and self._history:
            # keys changed since `version` (deleted ones among them) are visible to it too
            changed = self._history.irange(lo, hi, inclusive=(True, False), reverse=reverse)
            keys = list(islice(_merge_unique(keys_now, changed, reverse), size))
        else:
            keys = list(islice(keys_now, size))
        items = []
        for key in keys:
            value = self._visible(key, version)
            if value is not None:
                items.append((key, value))
        return items, (keys[-1] if len(keys) == size else None)

    def _apply(self, batch: KeyBatch) -> None:
        """Make a writer's batch the next version."""
        with self._lock:
            version = self._version + 1
            keep = bool(self._live)  # a live snapshot is older than this commit: keep the past
            data, history = self._data, self._history
            for key, value in batch.items():
                if keep:
                    before = data.get(key)
                    changes = history.get(key)
                    if changes is None:
                        history[key] = [(version, before)]
                    else:
                        changes.append((version, before))
                if value is None:
                    data.pop(key, None)
                else:
                    data[key] = value
            self._version = version

    def _release(self, version: int) -> None:
        with self._lock:
            live = self._live
            live[version] -= 1
            if live[version] <= 0:
                del live[version]
            if not self._history:
                return
            if not live:
                self._history.clear()
                self._prune_at = _PRUNE_MIN
            elif len(self._history) >= self._prune_at and version < min(live):
                self._prune(min(live))

    def _prune(self, oldest: int) -> None:
        """Drop history no live snapshot can read (changes at or before the oldest one); the
        next prune waits until the history has doubled, so pruning costs O(1) per change."""
        history = self._history
        for key in list(history):
            changes = [c for c in history[key] if c[0] > oldest]
            if changes:
                history[key] = changes
            else:
                del history[key]
        self._prune_at = max(_PRUNE_MIN, 2 * len(history))

    def size_on_disk(self) -> int:
        return 0

    def close(self) -> None:
        self._closed = True


def _merge_unique(a: Iterator[bytes], b: Iterator[bytes], reverse: bool) -> Iterator[bytes]:
    """Two sorted key streams as one, each key once."""
    last = None
    for key in heapq.merge(a, b, reverse=reverse):
        if key != last:
            last = key
            yield key


__all__ = ["MemoryEngine"]
