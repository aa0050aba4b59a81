"""Reads that resume across snapshots: a cursor's scan survives its batch snapshot closing, and a
cursor whose collection or index is dropped between batches fails instead of ending early."""
from __future__ import annotations

import pytest

from ginkgodb.engine.chunked_reader import ChunkedReader
from ginkgodb.errors import CommandError
from ginkgodb.storage.kv import prefix_end


def _fill(kv, keys):
    with kv.writer() as txn:
        for k in keys:
            txn.put(k, b"v")


def test_scan_resumes_after_the_snapshot_is_replaced(engine):
    keys = [b"k%05d" % i for i in range(3000)]
    _fill(engine.kv, keys)
    reader = ChunkedReader(engine)
    seen = []
    reader.open()
    for i, (key, _) in enumerate(reader.scan(b"k", prefix_end(b"k"))):
        seen.append(key)
        if i % 700 == 0:  # a batch boundary: a new snapshot
            reader.close()
            reader.open()
    reader.close()
    assert seen == keys


def test_reverse_scan_resumes_too(engine):
    keys = [b"k%05d" % i for i in range(2000)]
    _fill(engine.kv, keys)
    with ChunkedReader(engine) as reader:
        assert [k for k, _ in reader.scan(b"k", prefix_end(b"k"), reverse=True)] == keys[::-1]


def test_a_cursor_on_a_dropped_index_is_killed(engine):
    from ginkgodb.engine import writes
    from ginkgodb.engine.ddl import create_indexes, drop_indexes
    from ginkgodb.engine.plan_builder import FindRequest
    from ginkgodb.engine.reads import open_find
    writes.insert(engine, "db", "c", [{"_id": i, "a": i} for i in range(300)])
    with engine.write() as batch:
        create_indexes(batch, batch.collection("db", "c"), [{"key": {"a": 1}, "name": "a_1"}])
    cursor = open_find(engine, "db", "c", FindRequest(filter={"a": {"$gte": 0}}, hint="a_1"))
    assert len(cursor.next_batch(101)) == 101
    with engine.write() as batch:
        drop_indexes(batch, batch.collection("db", "c"), "a_1")
    with pytest.raises(CommandError) as info:
        cursor.next_batch(101)
    assert info.value.code == 175  # QueryPlanKilled, as mongod
    cursor.close()
