"""The ordered key-value contract every storage engine meets.

Keys and values are bytes; keys sort by unsigned byte order. A write transaction is atomic: all of
its puts and deletes become visible together at `commit`, or none at `abort`. Only one write
transaction runs at a time per engine (callers may rely on that: it is how document and index
writes stay atomic). Read transactions see committed data only.

Scans are half-open: [lo, hi). `prefix_end(p)` gives the hi that covers every key starting with p.
Long cursors read through `engine.reader.Reader`, which resumes scans across short transactions.
"""
from __future__ import annotations

import abc
from collections.abc import Iterator
from typing import Optional


def prefix_end(prefix: bytes) -> Optional[bytes]:
    """Smallest key greater than every key that starts with `prefix` (None: no such key)."""
    p = bytearray(prefix)
    while p:
        if p[-1] != 0xFF:
            p[-1] += 1
            return bytes(p)
        p.pop()
    return None


class Txn(abc.ABC):
    """A transaction; use as a context manager (commit on success, abort on exception)."""

    write: bool

    @abc.abstractmethod
    def get(self, key: bytes) -> Optional[bytes]: ...

    @abc.abstractmethod
    def put(self, key: bytes, value: bytes) -> None:
        """REQUIRES: a write transaction."""

    def put_many(self, pairs) -> None:
        """put() for many pairs; engines may do it faster when the pairs come sorted."""
        for key, value in pairs:
            self.put(key, value)

    @abc.abstractmethod
    def delete(self, key: bytes) -> bool:
        """Remove `key`; True when it existed. REQUIRES: a write transaction."""

    @abc.abstractmethod
    def scan(self, lo: bytes, hi: Optional[bytes], reverse: bool = False) -> Iterator[tuple[bytes, bytes]]:
        """Pairs with lo <= key < hi (hi None: to the end), ascending or descending.

        The iterator is valid only inside the transaction; a write transaction must not modify
        the range it is iterating (collect first, then write)."""

    def first(self, lo: bytes, hi: Optional[bytes]) -> Optional[bytes]:
        """The smallest key in [lo, hi), or None: a point probe without a scan's set-up cost."""
        for key, _ in self.scan(lo, hi):
            return key
        return None

    @abc.abstractmethod
    def commit(self) -> None: ...

    @abc.abstractmethod
    def abort(self) -> None: ...

    def __enter__(self) -> "Txn":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()


class KVEngine(abc.ABC):
    """An ordered key-value store. One instance per data directory, opened once."""

    durable: bool = False
    concurrent_readers: bool = False  # readers never wait for a writer (MVCC snapshots)
    path: Optional[str] = None

    @abc.abstractmethod
    def begin(self, write: bool = False) -> Txn: ...

    def sync(self) -> None:
        """Force everything committed so far onto stable storage."""

    def size_on_disk(self) -> int:
        return 0

    @abc.abstractmethod
    def close(self) -> None: ...
