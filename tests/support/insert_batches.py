"""Batches of documents that exercise every per-document check of insert_many: duplicates within
a batch and across batches (numbers, ObjectIds, strings), a missing `_id`, `_id`s that are arrays,
regexes or `$`-prefixed objects, Timestamps to fill in (top level) and to leave (nested), a deep
and a wide document, and an `_id` too long for the index. Tests that compare two insert paths
run both on these."""
from __future__ import annotations

from collections.abc import Iterator

import bson
from bson import Int64, ObjectId, Timestamp


def insert_batches() -> Iterator[list[dict]]:
    oid = ObjectId("65a1b2c3d4e5f60718293a4b")
    yield [{"_id": 1, "a": 1}, {"_id": 2}, {"_id": 1, "dup": "in batch"}, {"x": "no _id"}]
    yield [{"_id": 2, "dup": "of an earlier batch"}, {"b": 1, "_id": 3}, {"_id": oid},
           {"_id": [1]}, {"_id": {"k": 1}}, {"_id": Int64(4), "t": Timestamp(0, 0)},
           {"_id": 5.5}, {"_id": oid, "dup": "ObjectId"}]
    deep: dict = {"leaf": 1}
    for _ in range(120):
        deep = {"d": deep}
    yield [{"_id": "s" * 600}, {"_id": 6, "deep": deep}, {"_id": 7, "wide": "w" * 800},
           {"_id": {"$bad": 1}}, {"_id": bson.Regex("a")},
           {"_id": "s", "nested": {"t": Timestamp(0, 0)}}, {"_id": 8}, {"_id": "s", "dup": "string"}]
