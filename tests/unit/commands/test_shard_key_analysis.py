"""analyzeShardKey, configureQueryAnalyzer and top on an unsharded collection."""
from __future__ import annotations

import datetime

import pytest
from pymongo.errors import OperationFailure

import ginkgodb


@pytest.fixture
def client():
    c = ginkgodb.MongoClient()
    coll = c.shop.orders
    base = datetime.datetime(2024, 1, 1)
    coll.insert_many([{"_id": i, "created": base + datetime.timedelta(minutes=i), "status": ["new", "paid", "sent"][i % 3],
                       "customer": i % 50} for i in range(600)])
    coll.create_index("created")
    coll.create_index("status")
    coll.create_index([("customer", 1), ("_id", 1)])
    yield c
    c.close()


def test_key_characteristics(client):
    reply = client.admin.command({"analyzeShardKey": "shop.orders", "key": {"created": 1},
                                  "readWriteDistribution": False})
    kc = reply["keyCharacteristics"]
    assert kc["numDocsTotal"] == 600 and kc["numDocsSampled"] == 600
    assert kc["numDistinctValues"] == 600
    assert kc["isUnique"] is False
    assert kc["avgDocSizeBytes"] > 0
    assert kc["monotonicity"]["type"] == "monotonic"
    assert kc["monotonicity"]["recordIdCorrelationCoefficient"] > 0.99
    status = client.admin.command({"analyzeShardKey": "shop.orders", "key": {"status": 1},
                                   "readWriteDistribution": False})["keyCharacteristics"]
    assert status["numDistinctValues"] == 3
    assert [v["frequency"] for v in status["mostCommonValues"]] == [200, 200, 200]
    assert status["monotonicity"]["type"] == "not monotonic"
    sampled = client.admin.command({"analyzeShardKey": "shop.orders", "key": {"customer": 1},
                                    "sampleSize": 100, "readWriteDistribution": False})["keyCharacteristics"]
    assert sampled["numDocsSampled"] == 100 and sampled["numDocsTotal"] == 600


def test_errors(client):
    cases = [({"analyzeShardKey": "shop.orders", "key": {"nokey": 1}, "readWriteDistribution": False}, 20),
             ({"analyzeShardKey": "shop.missing", "key": {"a": 1}}, 26),
             ({"analyzeShardKey": "shop.orders", "key": {"created": 1}, "sampleRate": 0.5, "sampleSize": 5}, 72),
             ({"analyzeShardKey": "shop.orders", "key": {"created": 1}, "sampleRate": 2.0}, 2),
             ({"analyzeShardKey": "shop.orders", "key": {"created": 1}, "keyCharacteristics": False,
               "readWriteDistribution": False}, 72),
             ({"analyzeShardKey": "orders", "key": {"created": 1}}, 73),
             ({"configureQueryAnalyzer": "shop.orders", "mode": "full"}, 72),
             ({"configureQueryAnalyzer": "shop.orders", "mode": "off", "samplesPerSecond": 1}, 72),
             ({"configureQueryAnalyzer": "shop.missing", "mode": "full", "samplesPerSecond": 1}, 26)]
    for cmd, code in cases:
        with pytest.raises(OperationFailure) as err:
            client.admin.command(cmd)
        assert err.value.code == code, cmd
    # without a supporting index the characteristics are left out when distributions are asked for
    reply = client.admin.command({"analyzeShardKey": "shop.orders", "key": {"nokey": 1}})
    assert "keyCharacteristics" not in reply and "readDistribution" in reply


def test_read_write_distribution_from_sampled_queries(client):
    coll = client.shop.orders
    reply = client.admin.command({"configureQueryAnalyzer": "shop.orders", "mode": "full", "samplesPerSecond": 50})
    assert reply["newConfiguration"] == {"mode": "full", "samplesPerSecond": 50.0}
    for i in range(6):
        coll.find_one({"customer": i})                     # single shard under {customer: 1}
    for _ in range(2):
        list(coll.find({"customer": {"$gt": 40}}))         # a range: several shards
    for _ in range(2):
        list(coll.find({"status": "new"}))                 # scatter-gather
    coll.update_one({"customer": 3}, {"$set": {"status": "x"}})
    coll.update_many({"status": "x"}, {"$set": {"customer": 9}})
    reply = client.admin.command({"analyzeShardKey": "shop.orders", "key": {"customer": 1},
                                  "keyCharacteristics": False})
    reads, writes = reply["readDistribution"], reply["writeDistribution"]
    assert reads["sampleSize"]["total"] == 10 and reads["sampleSize"]["find"] == 10
    assert reads["percentageOfSingleShardReads"] == 60.0
    assert reads["percentageOfMultiShardReads"] == 20.0
    assert reads["percentageOfScatterGatherReads"] == 20.0
    assert writes["sampleSize"]["update"] == 2
    assert writes["percentageOfSingleShardWrites"] == 50.0
    assert writes["percentageOfShardKeyUpdates"] == 50.0
    assert writes["percentageOfMultiWritesWithoutShardKey"] == 50.0
    off = client.admin.command({"configureQueryAnalyzer": "shop.orders", "mode": "off"})
    assert off["oldConfiguration"]["mode"] == "full"


def test_top_counts_operations_per_namespace(client):
    coll = client.shop.orders
    coll.find_one({"_id": 1})
    coll.update_one({"_id": 1}, {"$inc": {"n": 1}})
    coll.delete_one({"_id": 2})
    totals = client.admin.command("top")["totals"]
    row = totals["shop.orders"]
    assert row["queries"]["count"] == 1 and row["update"]["count"] == 1 and row["remove"]["count"] == 1
    assert row["insert"]["count"] == 1       # the fixture's insert_many: one command
    assert row["total"]["count"] == 4
    with pytest.raises(OperationFailure) as err:
        client.shop.command("top")
    assert err.value.code == 13
