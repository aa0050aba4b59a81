"""Documents picked at random without reading the collection: mongod's random cursor.

A record id is drawn uniformly between the collection's first and next record ids and the
first record at or after it is taken (one B-tree seek each), until `size` distinct records are
found. Records after a run of deleted ids are a little more likely to be picked, as with
WiredTiger's random cursor; mongod's `$sample` takes this path when the sample is under 5% of a
collection of at least 100 documents, and so does ginkgodb's (`aggregate.py`). `analyzeShardKey`
and the advisor's sampling use it too.
"""
from __future__ import annotations

import random
from typing import Any

from ..storage.kv import prefix_end
from . import layout, record_format
from .batch import read_numbers

#: mongod's thresholds for answering $sample with a random cursor
RANDOM_CURSOR_MAX_FRACTION = 0.05
RANDOM_CURSOR_MIN_DOCUMENTS = 100


def uses_random_cursor(size: int, count: int) -> bool:
    return count >= RANDOM_CURSOR_MIN_DOCUMENTS and size < count * RANDOM_CURSOR_MAX_FRACTION


def sample_records(reader: Any, state: Any, size: int, rng: Any = None) -> list[tuple[int, bytes]]:
    """Up to `size` distinct (record id, BSON) pairs; all of them, in order, when `size` covers
    the collection."""
    rng = rng or random
    numbers = read_numbers(reader.txn, state.meta.id)
    prefix = state.record_prefix
    end = prefix_end(prefix)
    if size >= numbers.count:
        return [(layout.rid_of_record_key(k), record_format.document(v)) for k, v in reader.scan(prefix, end)]
    first_key = reader.first(prefix, end)
    if first_key is None:
        return []
    lo, hi = layout.rid_of_record_key(first_key), max(numbers.next_rid - 1, 1)
    picked: dict[int, bytes] = {}
    attempts = 0
    while len(picked) < size and attempts < size * 8:
        attempts += 1
        key = reader.first(state.record_key(rng.randint(lo, hi)), end)
        if key is None:
            continue
        rid = layout.rid_of_record_key(key)
        if rid not in picked:
            value = reader.get(key)
            if value is not None:
                picked[rid] = record_format.document(value)
    return list(picked.items())
