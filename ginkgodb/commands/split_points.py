"""Where to cut a range of a shard key (mongod's splitVector): the one rule for a shard's
`splitVector` command (entries weighed one per key) and the router's splitting by size
(entries weighed by their documents' BSON size).

Pure: the input is the range's entries in key order, each as (key values, weight). A cut is a
key value; the entries with that value start the next piece, so a cut never falls between two
entries sharing a key value (one value's documents always live in one chunk, which is why a
value shared by many documents makes a jumbo chunk).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

Entry = tuple[list[Any], int]


def cut_points(entries: Iterable[Entry], every: int, max_points: int = 0) -> list[list[Any]]:
    """Walking `entries` in key order: once the entries since the last cut (the range's start
    at first) weigh `every` or more, the next entry whose key differs from the last cut's (at
    first, the range's first key) is a cut, as mongod's splitVector picks its keys: a run of one
    value reached mid-way starts the next piece whole. At most `max_points` cuts (0: no limit)."""
    points: list[list[Any]] = []
    acc = 0
    last: Any = None
    first = True
    for values, weight in entries:
        if first:
            last, first = values, False
        elif acc >= every and values != last:
            points.append(values)
            if max_points and len(points) >= max_points:
                break
            last, acc = values, 0
        acc += weight
    return points


def split_points(entries: Sequence[Entry], max_bytes: int) -> list[list[Any]]:
    """The cuts that split a range larger than `max_bytes` into pieces of about half of it
    (splitVector cuts every maxChunkSize / 2, so a piece can grow before it splits again);
    [] when the range fits, or when no cut exists (every document has one key value: jumbo)."""
    if sum(size for _, size in entries) <= max_bytes:
        return []
    return cut_points(entries, max(1, max_bytes // 2))


def range_end(entries: Sequence[Entry], max_bytes: int) -> Any:
    """The key value where a range starting at the first entry reaches `max_bytes` (moveRange
    given only `min`), or None when the whole of `entries` fits."""
    cuts = cut_points(entries, max_bytes, max_points=1)
    return cuts[0] if cuts else None


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


__all__ = ["Entry", "cut_points", "range_end", "range_start", "split_points"]
