"""$indexStats accesses (persisted across restarts) and $queryStats shapes and metrics."""
from __future__ import annotations

import pytest
from pymongo.errors import OperationFailure

import ginkgodb


def _accesses(coll) -> dict:
    return {s["name"]: s["accesses"]["ops"] for s in coll.aggregate([{"$indexStats": {}}])}


def test_index_accesses_count_operations_and_survive_a_restart(tmp_path):
    client = ginkgodb.MongoClient(str(tmp_path))
    coll = client.db.c
    coll.insert_many([{"_id": i, "k": i % 10} for i in range(100)])
    coll.create_index("k")
    coll.create_index("unused")
    for i in range(4):
        coll.find_one({"_id": i})
    for i in range(3):
        list(coll.find({"k": i}))
    coll.update_one({"k": 5}, {"$set": {"x": 1}})
    coll.find({"k": 1}).explain()          # explain does not count
    assert _accesses(coll) == {"_id_": 4, "k_1": 4, "unused_1": 0}
    since = {s["name"]: s["accesses"]["since"] for s in coll.aggregate([{"$indexStats": {}}])}
    client.close()
    client = ginkgodb.MongoClient(str(tmp_path))
    coll = client.db.c
    assert _accesses(coll) == {"_id_": 4, "k_1": 4, "unused_1": 0}
    list(coll.find({"k": 2}))
    assert _accesses(coll)["k_1"] == 5
    stats = {s["name"]: s["accesses"]["since"] for s in coll.aggregate([{"$indexStats": {}}])}
    assert stats == since
    client.close()


def test_query_stats_groups_executions_by_shape():
    client = ginkgodb.MongoClient()
    coll = client.db.c
    coll.insert_many([{"_id": i, "k": i % 10, "s": "ab"} for i in range(200)])
    coll.create_index("k")
    for i in range(3):
        list(coll.find({"k": i}))
    list(coll.find({"s": {"$regex": "^A", "$options": "i"}}).sort("k", 1).limit(5))
    list(coll.find({}).batch_size(10))      # getMores are added to their execution
    list(coll.aggregate([{"$match": {"k": {"$in": [1, 2]}}}, {"$group": {"_id": "$k"}}]))
    stats = {str(s["key"]["queryShape"].get("filter", s["key"]["queryShape"].get("pipeline"))): s
             for s in client.admin.aggregate([{"$queryStats": {}}])}
    eq = stats[str({"k": {"$eq": "?number"}})]
    assert eq["key"]["queryShape"]["cmdNs"] == {"db": "db", "coll": "c"}
    assert eq["key"]["queryShape"]["command"] == "find"
    m = eq["metrics"]
    assert m["execCount"] == 3
    assert m["docsReturned"]["sum"] == 60 and m["docsReturned"]["max"] == 20
    assert m["keysExamined"]["sum"] == 60 and m["docsExamined"]["sum"] == 60
    assert m["planSummary"] == "IXSCAN { k: 1 }"
    assert m["totalExecMicros"]["sum"] >= m["totalExecMicros"]["max"] >= m["totalExecMicros"]["min"] >= 0
    assert set(eq) >= {"key", "keyHash", "queryShapeHash", "metrics", "asOf"}
    regex = stats[str({"s": {"$regex": "?regex/i"}})]
    assert regex["key"]["queryShape"]["sort"] == {"k": 1}
    assert regex["key"]["queryShape"]["limit"] == "?number"
    whole = stats[str({})]["metrics"]
    assert whole["docsReturned"]["sum"] == 200 and whole["execCount"] == 1
    agg = stats[str([{"$match": {"k": {"$in": "?array<?number>"}}}, {"$group": {"_id": "$k"}}])]
    assert agg["key"]["queryShape"]["command"] == "aggregate"
    client.close()


def test_query_stats_only_on_admin_with_aggregate_one():
    client = ginkgodb.MongoClient()
    with pytest.raises(OperationFailure) as err:
        list(client.db.aggregate([{"$queryStats": {}}]))
    assert err.value.code == 73
    with pytest.raises(OperationFailure) as err:
        list(client.admin.aggregate([{"$queryStats": {"bogus": 1}}]))
    assert err.value.code == 40415
    client.close()


def test_query_stats_and_top_are_kept_by_a_data_directory(tmp_path):
    client = ginkgodb.MongoClient(str(tmp_path))
    client.db.c.insert_many([{"k": i} for i in range(10)])
    for i in range(3):
        list(client.db.c.find({"k": i}))
    client.close()
    client = ginkgodb.MongoClient(str(tmp_path))
    list(client.db.c.find({"k": 5}))
    stats = [s for s in client.admin.aggregate([{"$queryStats": {}}])
             if s["key"]["queryShape"]["filter"] == {"k": {"$eq": "?number"}}]
    assert len(stats) == 1 and stats[0]["metrics"]["execCount"] == 4
    assert stats[0]["metrics"]["docsExamined"]["sum"] == 40
    assert client.admin.command("top")["totals"]["db.c"]["queries"]["count"] == 4
    client.close()


def test_small_sample_of_a_large_collection_uses_random_seeks():
    client = ginkgodb.MongoClient()
    coll = client.db.c
    coll.insert_many([{"_id": i, "k": i % 3} for i in range(2000)])
    coll.delete_many({"_id": {"$lt": 500}})                 # gaps in the record ids
    picked = list(coll.aggregate([{"$sample": {"size": 50}}, {"$project": {"k": 1}}]))
    ids = [d["_id"] for d in picked]
    assert len(ids) == 50 == len(set(ids)) and all(i >= 500 for i in ids)
    assert all(set(d) == {"_id", "k"} for d in picked)
    assert len({tuple(sorted(d["_id"] for d in coll.aggregate([{"$sample": {"size": 50}}]))) for _ in range(3)}) > 1
    assert len(list(coll.aggregate([{"$sample": {"size": 1000}}]))) == 1000   # over 5%: the reservoir
    client.close()


@pytest.mark.parametrize("spread", [False, True])
def test_query_stats_metrics_sum_max_min_and_squares_past_the_bulk_fold(spread):
    """Executions are folded in bulk (query_stats.FOLD_AT at a time): the aggregated metrics
    are those of every execution, whether a column holds one value or many."""
    client = ginkgodb.MongoClient()
    coll = client.db.c
    coll.insert_many([{"_id": i, "k": i % 4 if spread else 0} for i in range(21)])   # 6, 5, 5, 5 and 0 found
    returned = []
    for i in range(600):   # more than two folds
        k = i % 5 if spread else 0
        returned.append(len(list(coll.find({"k": k}))))
    [entry] = [s for s in client.admin.aggregate([{"$queryStats": {}}])
               if s["key"]["queryShape"]["cmdNs"]["coll"] == "c"]
    metrics = entry["metrics"]
    assert metrics["execCount"] == 600
    docs = metrics["docsReturned"]
    assert (docs["sum"], docs["max"], docs["min"]) == (sum(returned), max(returned), min(returned))
    assert int(str(docs["sumOfSquares"])) == sum(r * r for r in returned)
    scanned = metrics["docsExamined"]   # a collection scan examines every document each time
    assert (scanned["sum"], scanned["max"], scanned["min"]) == (600 * 21, 21, 21)
    assert int(str(scanned["sumOfSquares"])) == 600 * 21 * 21
    times = metrics["totalExecMicros"]
    assert times["min"] <= times["max"] and times["sum"] >= times["max"]
    assert metrics["firstResponseExecMicros"]["sum"] == times["sum"]
