"""A single-document write's target found through the shortcut (writes._shortcut_target) is the
one plan_builder.build finds: the same record, plan summary, counts and positional match."""
from __future__ import annotations

import pytest

from ginkgodb.engine import plan_builder as Q
from ginkgodb.engine import writes

FILTERS = [
    {"sku": "s3"},
    {"sku": "missing"},
    {"sku": "s3", "available": {"$gt": 0}},
    {"sku": "s4", "available": {"$gt": 0}},        # the residual fails: no target
    {"k": 2},
    {"k": {"$gte": 3, "$lt": 5}},
    {"k": 1, "tags": "b"},
    {"tags": "c"},
    {"tags": "c", "log.$": 1},
    {"sensor": 1, "count": {"$lt": 60}},
    {"_id": 3},
    {"_id": 3, "k": 0},
    {"loc": {"$near": [0, 0]}, "sku": "s1"},
    {"sku": "s1", "tags": {"$elemMatch": {"$eq": "a"}}},
]


@pytest.fixture
def items(engine):
    engine.insert("db", "items", [
        {"_id": i, "sku": f"s{i}", "k": i % 5, "available": i % 2, "tags": ["a", "b", "c"][: i % 4],
         "sensor": i % 3, "count": i * 7, "loc": [i, i]} for i in range(30)])
    engine.create_indexes("db", "items", [
        {"key": {"sku": 1}, "name": "sku_1", "unique": True}, {"key": {"k": 1}, "name": "k_1"},
        {"key": {"tags": 1}, "name": "tags_1"}, {"key": {"sensor": 1, "count": 1}, "name": "sensor_count"},
        {"key": {"loc": "2d"}, "name": "loc_2d"}])
    return engine


def _general(engine, batch, state, q):
    built = Q.build(state, engine.reader(batch.txn), Q.FindRequest(filter=q, limit=1), for_write=True)
    row = next(iter(built.root.rows()), None)
    return row, built


@pytest.mark.parametrize("q", FILTERS)
def test_shortcut_target_is_builds(items, q):
    with items.write() as batch:
        state = batch.collection("db", "items")
        row, general = _general(items, batch, state, q)
        rows, built = writes._targets(items, batch, state, q, False)
    assert [(rid, raw) for rid, raw, _ in rows] == ([row[:2]] if row else [])
    assert (built.plan_summary, built.keys_examined, built.docs_examined) == (
        general.plan_summary, general.keys_examined, general.docs_examined)
    if rows and "log.$" not in q:
        assert built.matcher.positional(rows[0][2]) == general.matcher.positional(rows[0][2])


def test_shortcut_counts_one_index_access(items):
    def accesses():
        meta = items.catalog.get("db", "items")
        return {ix.name: items.index_usage.accesses(ix.id)["ops"] for ix in meta.indexes}
    before = accesses()
    items.update("db", "items", [writes.UpdateStatement(q={"sku": "s3"}, u={"$inc": {"n": 1}})])
    after = accesses()
    assert {k: after[k] - before[k] for k in after} == {k: int(k == "sku_1") for k in after}
