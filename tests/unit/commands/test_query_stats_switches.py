"""$queryStats' rate limit and off switch, the find keys that skip rebuilding a shape, and the
query analyzer's sampling of count, distinct and findAndModify."""
from __future__ import annotations

import pytest
from pymongo.errors import OperationFailure

import ginkgodb
from ginkgodb.commands import COMMANDS
from ginkgodb.engine import SETTINGS
from ginkgodb.engine.query_stats import QueryStats


def _shapes(client) -> dict:
    return {str(s["key"]["queryShape"].get("filter")): s["metrics"]
            for s in client.admin.aggregate([{"$queryStats": {}}])}


@pytest.fixture
def client():
    c = ginkgodb.MongoClient()
    c.db.c.insert_many([{"_id": i, "k": i % 10, "s": str(i)} for i in range(50)])
    yield c
    c.admin.command({"setParameter": 1, "internalQueryStatsRateLimit": -1})
    c.close()


def test_rate_limit_parameter(client):
    assert SETTINGS.query_stats_rate_limit == -1       # ginkgodb's default: every query (mongod: 0)
    got = client.admin.command({"getParameter": 1, "internalQueryStatsRateLimit": 1})
    assert got["internalQueryStatsRateLimit"] == -1
    was = client.admin.command({"setParameter": 1, "internalQueryStatsRateLimit": 0})
    assert was["was"] == -1
    client.db.c.find_one({"k": 1})
    assert _shapes(client) == {}                       # 0: nothing recorded
    top = client.admin.command("top")["totals"]["db.c"]
    assert top["queries"]["count"] == 1                # but `top` counts every query
    client.admin.command({"setParameter": 1, "internalQueryStatsRateLimit": 3})
    for i in range(10):
        client.db.c.find_one({"k": i})
    assert _shapes(client)[str({"k": {"$eq": "?number"}})]["execCount"] <= 6   # at most 3 a second
    assert client.admin.command("top")["totals"]["db.c"]["queries"]["count"] == 11
    for bad in (-2, 1.5, "x", True):
        with pytest.raises(OperationFailure) as err:
            client.admin.command({"setParameter": 1, "internalQueryStatsRateLimit": bad})
        assert err.value.code == 2
    assert SETTINGS.query_stats_rate_limit == 3


def test_embedded_switch_turns_the_statistics_off():
    client = ginkgodb.MongoClient(queryStats=False)
    client.db.c.insert_one({"_id": 1})
    client.db.c.find_one({"_id": 1})
    assert list(client.admin.aggregate([{"$queryStats": {}}])) == []
    assert "db.c" not in client.admin.command("top")["totals"]
    client.close()


def test_keyed_finds_share_a_shape_only_when_the_shape_is_the_same(client):
    coll = client.db.c
    for i in range(3):
        coll.find_one({"k": i})                        # keyed: limit 1
    list(coll.find({"k": 1}))                          # no limit: another shape
    list(coll.find({"k": 1}, limit=0))                 # limit 0 is no limit
    list(coll.find({"s": "1"}))                        # another field
    list(coll.find({"k": 1}).sort("s", 1))             # a sort: built, not keyed
    shapes = {(str(s["key"]["queryShape"]["filter"]), "limit" in s["key"]["queryShape"],
               "sort" in s["key"]["queryShape"]): s["metrics"]["execCount"]
              for s in client.admin.aggregate([{"$queryStats": {}}])}
    eq_k = str({"k": {"$eq": "?number"}})
    assert shapes[(eq_k, True, False)] == 3
    assert shapes[(eq_k, False, False)] == 2
    assert shapes[(eq_k, False, True)] == 1
    assert shapes[(str({"s": {"$eq": "?string"}}), False, False)] == 1
    assert client.admin.command("top")["totals"]["db.c"]["queries"]["count"] == 7


def find_key(ns, cmd, filt):
    """The find's key when it determines the shape, else None."""
    key = QueryStats().keyed_entry(ns, COMMANDS["find"].parse({**cmd, "$db": "db"}).layout, filt)[1]
    return key if QueryStats.keyable(key) else None


def test_find_key():
    cmd = {"find": "c", "filter": {"a": 1}, "limit": 1, "singleBatch": True}
    assert find_key("db.c", cmd, {"a": 1}) == find_key("db.c", cmd, {"a": 2})
    assert find_key("db.c", cmd, {"a": 1}) != find_key("db.c", cmd, {"a": "x"})
    assert find_key("db.c", cmd, {"a": 1}) != find_key("db.d", cmd, {"a": 1})
    assert find_key("db.c", {k: v for k, v in cmd.items() if k != "limit"}, {"a": 1}) != find_key("db.c", cmd, {"a": 1})
    assert find_key("db.c", {**cmd, "sort": {"a": 1}}, {"a": 1}) is None
    assert find_key("db.c", cmd, {"a": {"$gt": 1}}) == find_key("db.c", cmd, {"a": {"$gt": 7}})
    assert find_key("db.c", cmd, {"a": {"$gt": 1}}) != find_key("db.c", cmd, {"a": {"$lt": 1}})
    assert find_key("db.c", cmd, {"a": {"$in": [1]}}) is None      # an array's shape names its items
    assert find_key("db.c", cmd, {"a": {"$regex": "x"}}) is None
    assert find_key("db.c", cmd, {"$expr": {"$gt": "$a"}}) is None  # an expression keeps its paths
    assert find_key("db.c", cmd, {"$expr": "$a"}) is None       # a field path stays in the shape
    assert find_key("db.c", cmd, {"a": "$b"}) is not None       # a string value does not


_FILTERS = [
    {"a": 1}, {"a": "x"}, {"a": None}, {"a": {"$gt": 1}}, {"a": {"$gt": 2.5}}, {"a": {"$gt": "s"}},
    {"a": {"$gt": 1, "$lt": 5}}, {"a": {"$lt": 5, "$gt": 1}}, {"a": {"$gt": 1, "b": 2}},
    {"a": {"$near": {"$geometry": {"type": "Point", "coordinates": [1, 2]}}}},
    {"a": {"$near": {"$geometry": {"type": "Point", "coordinates": [3, 4]}, "$maxDistance": 9}}},
    {"a": {"$near": [1, 2]}}, {"a": {"$in": [1, 2]}}, {"a": {"$in": ["x"]}}, {"a": {"$in": []}},
    {"a": {"$exists": True}}, {"a": {"$exists": 1}}, {"a": {"$type": "string"}},
    {"a": {"$regex": "x"}}, {"a": {"$regex": "x", "$options": "i"}}, {"a": {"$not": {"$gt": 1}}},
    {"a": {"$not": {"$lt": 1}}}, {"a": {"$elemMatch": {"b": 1}}}, {"a": {"$elemMatch": {"c": 1}}},
    {"a": {"b": 1}}, {"a": {"c": [1, "x"]}}, {"a": {}}, {"a": {"$gt": {"b": 1}}}, {"a": {"$gt": {}}},
    {"a": 1, "b": {"$gt": 1}}, {"a": 2, "b": {"$gt": 3}}, {"a": 2, "b": {"$lt": 3}},
    {"$expr": {"$gt": ["$a", 1]}}, {"$expr": {"$gt": ["$b", 1]}}, {"$expr": {"$eq": "$a"}},
    {"$expr": {"$eq": "$b"}}, {"$comment": {"x": 1}}, {"$comment": {"y": 1}},
]


def test_keyed_finds_have_the_shape_their_key_leads_to():
    """Finds with one key (the keyed lookup's fast path) have one shape (the general path's)."""
    from ginkgodb.engine import find_shape
    cmd = {"find": "c", "filter": {"a": 1}, "limit": 1, "singleBatch": True}
    by_key: dict = {}
    for filt in _FILTERS:
        key = find_key("db.c", cmd, filt)
        if key is not None:
            by_key.setdefault(key, set()).add(find_shape("db", "c", filt, None, None, 0, 1, None, None))
    assert all(len(shapes) == 1 for shapes in by_key.values()), by_key
    assert len(by_key) >= 15      # document operands are keyed too
    near = [{"a": {"$near": {"$geometry": {"type": "Point", "coordinates": c}}}} for c in ([1, 2], [5, 6])]
    assert find_key("db.c", cmd, near[0]) == find_key("db.c", cmd, near[1]) is not None


def test_finds_on_document_operands_are_counted_per_shape(client):
    coll = client.db.c
    for i in range(3):
        coll.find_one({"k": {"$gt": i}})
        coll.find_one({"k": {"$gt": str(i)}})
        coll.find_one({"k": {"b": i}})
    coll.find_one({"k": {"$lt": 1}})
    shapes = {str(s["key"]["queryShape"]["filter"]): s["metrics"]["execCount"]
              for s in client.admin.aggregate([{"$queryStats": {}}])}
    assert shapes[str({"k": {"$gt": "?number"}})] == 3
    assert shapes[str({"k": {"$gt": "?string"}})] == 3
    assert shapes[str({"k": {"$eq": "?object"}})] == 3
    assert shapes[str({"k": {"$lt": "?number"}})] == 1


def test_evicted_shapes_still_count_in_top(client, monkeypatch):
    from ginkgodb.engine import query_stats
    monkeypatch.setattr(query_stats, "MAX_SHAPES", 2)
    coll = client.db.c
    for name in ("a", "b", "c", "a", "d"):
        coll.find_one({name: 1})
    assert len(_shapes(client)) == 2
    assert client.admin.command("top")["totals"]["db.c"]["queries"]["count"] == 5


def test_query_analyzer_samples_count_distinct_and_find_and_modify(client):
    client.db.c.create_index("k")
    client.admin.command({"configureQueryAnalyzer": "db.c", "mode": "full", "samplesPerSecond": 50})
    coll = client.db.c
    coll.count_documents({"k": 1})
    client.db.command({"count": "c", "query": {"k": 2}})
    coll.distinct("s", {"k": 3})
    coll.find_one_and_update({"k": 4}, {"$set": {"x": 1}})
    coll.find_one_and_delete({"_id": 0})
    reply = client.admin.command({"analyzeShardKey": "db.c", "key": {"k": 1}, "keyCharacteristics": False})
    reads, writes = reply["readDistribution"]["sampleSize"], reply["writeDistribution"]["sampleSize"]
    assert reads["count"] == 1 and reads["distinct"] == 1
    assert reads["aggregate"] == 1          # count_documents is an aggregation
    assert writes["findAndModify"] == 2
    assert reply["writeDistribution"]["percentageOfSingleShardWrites"] == 50.0   # {k: 4}; {_id: 0} scatters
