"""Sorting within a memory budget: beyond it, sorted runs go to temporary files and are merged.

The blocking stages (find's SORT, `$sort`, `$group` once it spills) hand `SortBuffer` items keyed
by key-codec bytes. While the items' approximate size stays within the stage's limit they are
sorted in memory; past it the buffer either fails with mongod's 292 (the query did not allow
disk use) or writes its items, sorted, to a run file and starts again. Reading merges the runs
and what is still in memory. Keys are made unique and stable by the item's arrival number, so a
spilled sort returns exactly what an in-memory sort of the same items returns.

Run files are anonymous temporary files (unlinked at creation where the OS allows) in the data
directory's `_tmp` or the system's temporary directory, closed when the read ends.
"""
from __future__ import annotations

import heapq
import os
import pickle
import struct
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, Any, Optional

from ginkgodb.errors import CommandError

from .knobs import KNOBS
from .operation import checked

_HEADER = struct.Struct("<II")
_SEQ = struct.Struct(">Q")
#: approximate bookkeeping bytes per buffered item (tuple, key object, list slot)
ITEM_OVERHEAD = 64


@dataclass(frozen=True)
class Spill:
    """Whether a blocking stage may write to disk, and where."""

    allowed: bool
    directory: Optional[str] = None  # None: the system's temporary directory

    @classmethod
    def for_request(cls, allow_disk_use: Optional[bool], directory: Optional[str] = None) -> Spill:
        """`allowDiskUse` as the command gave it; absent, the server's allowDiskUseByDefault."""
        allowed = KNOBS.allow_disk_use_by_default if allow_disk_use is None else bool(allow_disk_use)
        return cls(allowed, directory)


NO_SPILL = Spill(False)


def _dumps(value: Any) -> bytes:
    return pickle.dumps(value, pickle.HIGHEST_PROTOCOL)


class SortBuffer:
    """Items `(key, value)` delivered in key order (ties in arrival order), memory bounded.

    `exceeded()` builds the error for a stage that may not spill; `to_disk`/`from_disk` turn a
    value into the bytes a run file holds and back (default: pickle, which restores Python
    values exactly)."""

    def __init__(self, limit: int, spill: Spill, exceeded: Callable[[], CommandError], *,
                 to_disk: Callable[[Any], bytes] = _dumps,
                 from_disk: Callable[[bytes], Any] = pickle.loads) -> None:
        self.limit, self.spill, self.exceeded = limit, spill, exceeded
        self.to_disk, self.from_disk = to_disk, from_disk
        self.items: list[tuple[bytes, Any]] = []
        self.used = 0
        self.seq = 0
        self.runs: list[IO[bytes]] = []
        self.spilled_items = 0
        self.spilled_bytes = 0

    @property
    def spills(self) -> int:
        return len(self.runs)

    def add(self, key: bytes, value: Any, size: int) -> None:
        self.items.append((key + _SEQ.pack(self.seq), value))
        self.seq += 1
        self.used += size + len(key) + ITEM_OVERHEAD
        if self.used > self.limit:
            self._spill()

    def _spill(self) -> None:
        if not self.spill.allowed:
            raise self.exceeded()
        self.items.sort(key=_first)
        run = _open_run(self.spill.directory)
        write, pack, encode = run.write, _HEADER.pack, self.to_disk
        for key, value in checked(iter(self.items)):
            payload = encode(value)
            write(pack(len(key), len(payload)))
            write(key)
            write(payload)
            self.spilled_bytes += len(payload)
        run.flush()
        self.spilled_items += len(self.items)
        self.runs.append(run)
        self.items = []
        self.used = 0

    def __iter__(self) -> Iterator[tuple[bytes, Any]]:
        """The items in order, each key without its arrival number; the buffer is spent."""
        items, self.items = self.items, []
        items.sort(key=_first)
        if not self.runs:
            for key, value in items:
                yield key[:-8], value
            return
        runs, self.runs = self.runs, []
        try:
            streams = [_read_run(run, self.from_disk) for run in runs]
            for key, value in checked(heapq.merge(*streams, iter(items), key=_first)):
                yield key[:-8], value
        finally:
            for run in runs:
                run.close()

    def close(self) -> None:
        """Drop whatever is buffered (a query that stops early)."""
        for run in self.runs:
            run.close()
        self.runs, self.items = [], []


def _first(item: tuple) -> bytes:
    return item[0]


def _open_run(directory: Optional[str]) -> IO[bytes]:
    if directory is not None:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    return tempfile.TemporaryFile(prefix="ginkgodb-sort-", dir=directory)


def _read_run(run: IO[bytes], decode: Callable[[bytes], Any]) -> Iterator[tuple[bytes, Any]]:
    run.seek(0)
    reader = os.fdopen(os.dup(run.fileno()), "rb", buffering=256 * 1024)
    try:
        read, size, unpack = reader.read, _HEADER.size, _HEADER.unpack
        while True:
            header = read(size)
            if not header:
                return
            key_len, payload_len = unpack(header)
            key = read(key_len)
            yield key, decode(read(payload_len))
    finally:
        reader.close()
