"""In-memory engine: a sorted map, for tests and `MongoClient()` without a path.

A write transaction holds the engine lock from begin to commit/abort and keeps an undo log, so
readers (who take the lock per operation or per scan chunk) never see uncommitted writes.
"""
from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Optional

from sortedcontainers import SortedDict

from ..errors import StorageError
from .kv import KVEngine, Txn

_CHUNK = 256


class MemoryTxn(Txn):
    def __init__(self, engine: "MemoryEngine", write: bool) -> None:
        self._engine = engine
        self._data = engine._data
        self.write = write
        self._undo: list[tuple[bytes, Optional[bytes]]] = []
        self._open = True
        if write:
            engine._lock.acquire()

    def get(self, key: bytes) -> Optional[bytes]:
        if self.write:
            return self._data.get(key)
        with self._engine._lock:
            return self._data.get(key)

    def put(self, key: bytes, value: bytes) -> None:
        assert self.write, "put in a read transaction"
        self._undo.append((key, self._data.get(key)))
        self._data[key] = bytes(value)

    def delete(self, key: bytes) -> bool:
        assert self.write, "delete in a read transaction"
        old = self._data.pop(key, None)
        if old is None:
            return False
        self._undo.append((key, old))
        return True

    def scan(self, lo: bytes, hi: Optional[bytes], reverse: bool = False) -> Iterator[tuple[bytes, bytes]]:
        data, lock = self._data, self._engine._lock
        while True:
            with lock:
                keys = list(_islice(data.irange(lo, hi, inclusive=(True, False), reverse=reverse), _CHUNK))
                items = [(k, data[k]) for k in keys]
            yield from items
            if len(keys) < _CHUNK:
                return
            if reverse:
                hi = keys[-1]
            else:
                lo = keys[-1] + b"\x00"

    def first(self, lo: bytes, hi: Optional[bytes]) -> Optional[bytes]:
        if self.write:
            return _first(self._data, lo, hi)
        with self._engine._lock:
            return _first(self._data, lo, hi)

    def commit(self) -> None:
        self._finish()

    def abort(self) -> None:
        if self.write and self._open:
            data = self._data
            for key, old in reversed(self._undo):
                if old is None:
                    data.pop(key, None)
                else:
                    data[key] = old
        self._finish()

    def _finish(self) -> None:
        if self._open:
            self._open = False
            if self.write:
                self._undo.clear()
                self._engine._lock.release()


def _first(data: SortedDict, lo: bytes, hi: Optional[bytes]) -> Optional[bytes]:
    i = data.bisect_left(lo)
    if i < len(data):
        key = data.keys()[i]
        if hi is None or key < hi:
            return key
    return None


def _islice(it, n):
    for i, x in enumerate(it):
        if i >= n:
            return
        yield x


class MemoryEngine(KVEngine):
    durable = False

    def __init__(self) -> None:
        self._data: SortedDict = SortedDict()
        self._lock = threading.RLock()
        self._closed = False

    def begin(self, write: bool = False) -> Txn:
        if self._closed:
            raise StorageError("closed", "engine is closed")
        return MemoryTxn(self, write)

    def size_on_disk(self) -> int:
        return 0

    def close(self) -> None:
        self._closed = True
