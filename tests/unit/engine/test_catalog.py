"""Databases, collections and their statistics; reopening a data directory."""
from __future__ import annotations

import pytest
from support.runner import Runner

from ginkgodb.engine import Engine


@pytest.fixture
def run(engine):
    return Runner(engine)


def test_coll_stats_and_db_stats_count_real_sizes(run):
    run.insert("c", *({"_id": i, "s": "x" * 100} for i in range(10)))
    run({"createIndexes": "c", "indexes": [{"key": {"s": 1}, "name": "s_1"}]})
    stats = run({"collStats": "c"})
    assert stats["count"] == 10 and stats["nindexes"] == 2
    assert stats["size"] == 10 * len(__import__("bson").encode({"_id": 0, "s": "x" * 100}))
    assert set(stats["indexSizes"]) == {"_id_", "s_1"} and all(v > 0 for v in stats["indexSizes"].values())
    assert stats["totalIndexSize"] == sum(stats["indexSizes"].values())
    assert stats["storageSize"] >= stats["size"]
    db = run({"dbStats": 1})
    assert db["collections"] == 1 and db["objects"] == 10 and db["indexes"] == 2
    assert run.error({"collStats": "missing"})["code"] == 26


def test_reopening_a_data_directory_finds_everything(tmp_path):
    path = str(tmp_path / "data")
    engine = Engine.open(path)
    run = Runner(engine)
    run.insert("c", *({"_id": i, "k": i % 5} for i in range(20)))
    run({"createIndexes": "c", "indexes": [{"key": {"k": 1}, "name": "k_1", "unique": False}]})
    run({"create": "empty", "validator": {"x": {"$exists": True}}})
    engine.close()
    engine = Engine.open(path)
    run = Runner(engine)
    assert len(run.find("c")) == 20
    assert run.explain("c", {"k": 3})["queryPlanner"]["winningPlan"]["inputStage"]["indexName"] == "k_1"
    assert len(run.find("c", {"k": 3})) == 4
    assert [c["name"] for c in run({"listCollections": 1})["cursor"]["firstBatch"]] == ["c", "empty"]
    assert run.insert("c", {"_id": 20})["n"] == 1  # record ids continue after the last one
    assert run.insert("empty", {"y": 1})["writeErrors"][0]["code"] == 121
    engine.close()


def test_schema_validation(run):
    run({"create": "v", "validator": {"qty": {"$gte": 0}}})
    assert run.insert("v", {"qty": 1})["n"] == 1
    err = run.insert("v", {"qty": -1})["writeErrors"][0]
    assert err["code"] == 121 and err["errmsg"] == "Document failed validation"
    assert run.insert("v", {"qty": -1}, bypassDocumentValidation=True)["n"] == 1
    reply = run({"update": "v", "updates": [{"q": {"qty": 1}, "u": {"$set": {"qty": -5}}}]})
    assert reply["writeErrors"][0]["code"] == 121


def test_capped_collection_drops_oldest_documents_by_count_and_size(run):
    run({"create": "log", "capped": True, "size": 100000, "max": 3})
    run.insert("log", *({"_id": i} for i in range(5)))
    assert [d["_id"] for d in run.find("log")] == [2, 3, 4]
    assert [d["_id"] for d in run.find("log", sort={"$natural": -1})] == [4, 3, 2]
    run({"create": "small", "capped": True, "size": 1000})
    run.insert("small", *({"_id": i, "pad": "x" * 200} for i in range(20)))
    docs = run.find("small")
    assert sum(len(__import__("bson").encode(d)) for d in docs) <= 1024
    assert docs[-1]["_id"] == 19 and docs[0]["_id"] > 0
    assert run({"collStats": "small"})["capped"] is True


def test_tailable_cursor_follows_inserts_into_a_capped_collection(run):
    import time
    run({"create": "log", "capped": True, "size": 100000})
    run.insert("log", {"_id": 1, "level": "info"}, {"_id": 2, "level": "error"})
    first = run({"find": "log", "filter": {"level": "error"}, "tailable": True, "awaitData": True})
    assert [d["_id"] for d in first["cursor"]["firstBatch"]] == [2] and first["cursor"]["id"] != 0
    cid = first["cursor"]["id"]
    started = time.monotonic()
    empty = run({"getMore": cid, "collection": "log", "maxTimeMS": 50})
    assert empty["cursor"]["nextBatch"] == [] and empty["cursor"]["id"] == cid
    assert time.monotonic() - started >= 0.04  # awaitData waited for new documents
    run.insert("log", {"_id": 3, "level": "error"}, {"_id": 4, "level": "info"})
    more = run({"getMore": cid, "collection": "log"})
    assert [d["_id"] for d in more["cursor"]["nextBatch"]] == [3]
    assert run.error({"find": "c", "tailable": True})["code"] == 2
