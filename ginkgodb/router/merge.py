"""Merging shards' result streams: sort-merge by query/'s sort keys, then skip and limit. Pure.

Each shard returns its documents already sorted (the router sends it the sort, and the skip
and limit widened to skip+limit); the router merges the sorted streams with `heapq.merge` on
the same byte keys mongod orders by (`compile_sort(spec).key`), then applies skip and limit
once, and the projection after the merge when the shards could not apply it themselves.
"""
from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Optional

from ..query.sort import compile_sort


def merge_streams(streams: Sequence[Iterable[Any]], sort: Optional[dict] = None, skip: int = 0,
                  limit: int = 0) -> Iterator[Any]:
    """One stream of documents: sort-merged when `sort` is given (each stream sorted by it),
    else concatenated in shard order; then `skip` and `limit` (0: no limit)."""
    if sort:
        key = compile_sort(sort).key
        merged: Iterator[Any] = heapq.merge(*streams, key=key)
    else:
        merged = itertools.chain.from_iterable(streams)
    if skip:
        merged = itertools.islice(merged, skip, None)
    if limit:
        merged = itertools.islice(merged, limit)
    return merged


def shard_limit(skip: int, limit: int) -> int:
    """What each shard is asked for: every document the merge may need."""
    return skip + limit if limit else 0
