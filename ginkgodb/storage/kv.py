"""The ordered key-value contract every storage engine meets.

Keys and values are bytes; keys sort by unsigned byte order. Scans are half-open: [lo, hi);
`prefix_end(p)` gives the hi that covers every key starting with p.

- `KVEngine.snapshot()` is a consistent read view: it sees exactly the data committed when it
  was taken, whatever commits later, until `release()`. Readers never wait for the writer.
- `KVEngine.begin(write=True)` is the one writer at a time (callers may rely on that: it is how
  document and index writes stay atomic). A write `Txn` reads its own writes; `commit()` makes all
  of them visible at once, `abort()` none of them.
- `storage.batch.KeyBatch` holds puts and deletes as a value, to be applied later by
  `Txn.apply` (what a multi-document transaction buffers until it commits).

Long cursors read through `engine.chunked_reader.ChunkedReader`, which resumes scans across short
snapshots so that nothing stays pinned between batches.
"""
from __future__ import annotations

import abc
from collections.abc import Iterable, Iterator
from typing import Any, Optional

_BYTES = [bytes((i,)) for i in range(256)]


def prefix_end(prefix: bytes) -> Optional[bytes]:
    """Smallest key greater than every key that starts with `prefix` (None: no such key)."""
    if prefix:
        last = prefix[-1]
        if last != 0xFF:      # nearly always: no copy into a bytearray
            return prefix[:-1] + _BYTES[last + 1]
    p = bytearray(prefix)
    while p:
        if p[-1] != 0xFF:
            p[-1] += 1
            return bytes(p)
        p.pop()
    return None


class Snapshot(abc.ABC):
    """A consistent read view; use as a context manager (released on exit)."""

    write: bool = False

    @abc.abstractmethod
    def get(self, key: bytes) -> Optional[bytes]: ...

    @abc.abstractmethod
    def scan(self, lo: bytes, hi: Optional[bytes], reverse: bool = False) -> Iterator[tuple[bytes, bytes]]:
        """Pairs with lo <= key < hi (hi None: to the end), ascending or descending.

        The iterator is valid only while the view is open; a write transaction must not modify
        the range it is iterating (collect first, then write)."""

    def first(self, lo: bytes, hi: Optional[bytes]) -> Optional[bytes]:
        """The smallest key in [lo, hi), or None: a point probe without a scan's set-up cost."""
        for key, _ in self.scan(lo, hi):
            return key
        return None

    def get_many(self, keys: list[bytes]) -> list[Optional[bytes]]:
        """`get` of each key, in one call (engines answer it under one lock)."""
        get = self.get
        return [get(key) for key in keys]

    def keys_in_ranges(self, ranges: list[tuple[bytes, Optional[bytes]]]) -> list[bytes]:
        """The keys of each [lo, hi) in turn (hi None: to the end), in one call: many short
        scans without a scan's set-up each (a near search's round reads a few keys from each
        of a dozen ranges). Engines answer it with one cursor or one lock."""
        return [key for lo, hi in ranges for key, _ in self.scan(lo, hi)]

    def data_version(self) -> Optional[int]:
        """The committed state this view reads, as a number: two views of one engine with the
        same number see the same data (None: not known, as for a write transaction). Lets a
        reader keep what it learned from one view for the next ones while nothing changed."""
        return None

    @abc.abstractmethod
    def release(self) -> None:
        """End the view (idempotent). A write transaction released without commit aborts."""

    def __enter__(self) -> Snapshot:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.release()


class Txn(Snapshot):
    """A write transaction: a snapshot that also writes; commit on success, abort on exception."""

    write = True

    @abc.abstractmethod
    def put(self, key: bytes, value: bytes) -> None: ...

    def put_many(self, pairs: Iterable[tuple[bytes, bytes]]) -> None:
        """put() for many pairs; engines may do it faster when the pairs come sorted."""
        for key, value in pairs:
            self.put(key, value)

    @abc.abstractmethod
    def delete(self, key: bytes) -> bool:
        """Remove `key`; True when it existed."""

    def apply(self, batch: Any) -> None:
        """Apply a KeyBatch's puts and deletes (`items()`: key, value or None) in key order."""
        for key, value in batch.items():
            if value is None:
                self.delete(key)
            else:
                self.put(key, value)

    @abc.abstractmethod
    def commit(self) -> None: ...

    @abc.abstractmethod
    def abort(self) -> None: ...

    def base_version(self) -> Optional[int]:
        """The committed state this writer began on, as a number (None: not known). A commit
        that wrote anything makes the next writer's number this + 1, unless another process
        committed too: the engine keeps what it knows of its own commits while it holds."""
        return None

    def release(self) -> None:
        self.abort()

    def __enter__(self) -> Txn:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()


class KVEngine(abc.ABC):
    """An ordered key-value store. One instance per data directory, opened once."""

    durable: bool = False
    concurrent_readers: bool = False  # readers never wait for a writer, even a committing one
    path: Optional[str] = None
    #: other processes may commit to the same data at any time (docs/design/multiprocess.md)
    shared: bool = False

    @abc.abstractmethod
    def snapshot(self) -> Snapshot: ...

    @abc.abstractmethod
    def writer(self, reclaims: bool = False) -> Txn:
        """The write transaction (blocks while another one is open). `reclaims`: the caller only
        deletes (documents, collections, indexes), so it runs even when the disk is full."""

    @property
    def disk_full(self) -> bool:
        """Within a low-space episode (only engines with a disk have them)."""
        return False

    def begin(self, write: bool = False) -> Snapshot:
        """A write transaction, or a snapshot (kept for callers that choose at run time)."""
        return self.writer() if write else self.snapshot()

    def sync(self) -> None:  # noqa: B027 - engines without a disk have nothing to force
        """Force everything committed so far onto stable storage."""

    def size_on_disk(self) -> int:
        return 0

    # -- sharing the data with other processes: engines that never share answer trivially -------
    def commits_elsewhere_since(self, snap: Snapshot, txn: Txn) -> bool:
        """Did another process commit between the snapshot `snap` and the write `txn`?"""
        return False

    def commit_stamp(self) -> int:
        """A number that moves at every commit of any process sharing the data (polled by
        awaitData readers when the engine is shared)."""
        return 0

    def lease(self, name: str) -> bool:
        """Hold the data's lease `name` (one holder among the processes sharing it)."""
        return True

    @abc.abstractmethod
    def close(self) -> None: ...
