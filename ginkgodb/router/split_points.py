"""Where to cut a range of the shard key by data size (mongod's splitVector / autoSplitVector).

Pure: the input is the range's documents in shard key index order, each as (key values in key
space, BSON size). A cut is a key value; the documents with that value start the next chunk,
so a cut never falls between two documents sharing a key value (one value's documents always
live in one chunk, which is why a value shared by many documents makes a jumbo chunk).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Entry = tuple[list[Any], int]


def split_points(entries: Sequence[Entry], max_bytes: int) -> list[list[Any]]:
    """The cuts that split a range larger than `max_bytes` into pieces of about half of it
    (splitVector cuts every maxChunkSize / 2, so a piece can grow before it splits again);
    [] when the range fits, or when no cut exists (every document has one key value: jumbo)."""
    if sum(size for _, size in entries) <= max_bytes:
        return []
    half = max(1, max_bytes // 2)
    points: list[list[Any]] = []
    acc = 0
    prev: Any = None
    for i, (values, size) in enumerate(entries):
        if i and acc >= half and values != prev:
            points.append(values)
            acc = 0
        acc += size
        prev = values
    return points


def range_end(entries: Sequence[Entry], max_bytes: int) -> Any:
    """The key value where a range starting at the first entry reaches `max_bytes` (moveRange
    given only `min`), or None when the whole of `entries` fits."""
    acc = 0
    prev: Any = None
    for i, (values, size) in enumerate(entries):
        if i and acc >= max_bytes and values != prev:
            return values
        acc += size
        prev = values
    return None


def range_start(entries: Sequence[Entry], max_bytes: int) -> Any:
    """The key value where a range ending after the last entry, read backwards, reaches
    `max_bytes` (moveRange given only `max`): the first document of that value's run starts it;
    None when the whole of `entries` fits or the run reaches the first entry."""
    acc = 0
    for i in range(len(entries) - 1, -1, -1):
        acc += entries[i][1]
        if acc >= max_bytes:
            while i > 0 and entries[i - 1][0] == entries[i][0]:
                i -= 1
            return entries[i][0] if i > 0 else None
    return None


__all__ = ["Entry", "range_end", "range_start", "split_points"]
