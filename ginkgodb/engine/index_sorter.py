"""The index build's sorter: entries sorted in runs of bounded size, spilled to temporary files,
merged back in key order.

A build collects one entry (encoded key + record id) per document and key; held in one list
they cost about 70 bytes each in Python objects, 70 MiB of heap at a million documents, on top
of the pages LMDB keeps dirty for the build's transaction. mongod bounds its sorter the same
way (`maxIndexBuildMemoryUsageMegabytes`) and spills to files. A collection whose entries fit in
one run is sorted in memory as before, with no file and no merge.

Spilled entries are stored length-prefixed in an unlinked temporary file (gone with the
process), read back a block at a time, so the merge holds one block per run.
"""
from __future__ import annotations

import heapq
import struct
import tempfile
from collections.abc import Iterable, Iterator
from typing import IO, Optional

RUN_ENTRIES = 65_536    # entries sorted in memory before a run is spilled (~4.5 MiB of objects)
READ_BLOCK = 1 << 18    # bytes read at a time from each spilled run during the merge
_LEN = struct.Struct("<I")


class EntrySorter:
    """`add`/`extend` entries in any order, then iterate `sorted_entries()` once; `close()`
    (or `with`) removes the spilled runs."""

    def __init__(self, run_entries: Optional[int] = None, directory: Optional[str] = None) -> None:
        self._limit = run_entries or RUN_ENTRIES
        self._dir = directory
        self._run: list[bytes] = []
        self._files: list[IO[bytes]] = []
        self.count = 0

    def extend(self, entries: Iterable[bytes]) -> None:
        run = self._run
        before = len(run)
        run.extend(entries)
        self.count += len(run) - before
        if len(run) >= self._limit:
            self._spill()

    def sorted_entries(self) -> Iterator[bytes]:
        """Every entry added, in ascending byte order (duplicates kept)."""
        self._run.sort()
        if not self._files:
            return iter(self._run)
        if self._run:
            self._spill()
        return heapq.merge(*(_read_run(f) for f in self._files))

    def _spill(self) -> None:
        run = self._run
        run.sort()
        f = tempfile.TemporaryFile(prefix="ginkgodb-index-build-", dir=self._dir)
        pack = _LEN.pack
        f.write(b"".join([part for entry in run for part in (pack(len(entry)), entry)]))
        f.seek(0)
        self._files.append(f)
        self._run = []

    def close(self) -> None:
        files, self._files, self._run = self._files, [], []
        for f in files:
            f.close()

    def __enter__(self) -> EntrySorter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _read_run(f: IO[bytes]) -> Iterator[bytes]:
    """The entries of one spilled run, in the order written, a block of the file at a time."""
    unpack = _LEN.unpack_from
    width = _LEN.size
    rest = b""
    while True:
        block = f.read(READ_BLOCK)
        if not block:
            if rest:
                raise ValueError("index build: a spilled run ends inside an entry")
            return
        data = rest + block if rest else block
        end, pos, out = len(data), 0, []
        while pos + width <= end:
            size = unpack(data, pos)[0]
            stop = pos + width + size
            if stop > end:
                break
            out.append(data[pos + width:stop])
            pos = stop
        rest = data[pos:]
        yield from out
