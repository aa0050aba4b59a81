"""Read-only views over collections and other views."""
from __future__ import annotations

import pytest
from support.runner import Runner


@pytest.fixture
def run(engine):
    r = Runner(engine)
    r.insert("orders", *({"_id": i, "status": "A" if i % 2 else "B", "qty": i} for i in range(10)))
    r({"create": "active", "viewOn": "orders", "pipeline": [{"$match": {"status": "A"}}]})
    return r


def test_find_count_distinct_and_aggregate_read_through_a_view(run):
    assert [d["_id"] for d in run.find("active", {"qty": {"$gt": 4}}, sort={"qty": -1})] == [9, 7, 5]
    assert run.find("active", {}, projection={"_id": 0, "qty": 1}, limit=2, skip=1) == [{"qty": 3}, {"qty": 5}]
    assert run({"count": "active"})["n"] == 5
    assert run({"distinct": "active", "key": "status"})["values"] == ["A"]
    reply = run({"aggregate": "active", "pipeline": [{"$group": {"_id": None, "t": {"$sum": "$qty"}}}], "cursor": {}})
    assert reply["cursor"]["firstBatch"] == [{"_id": None, "t": 25}]


def test_views_on_views_and_listing(run):
    run({"create": "big", "viewOn": "active", "pipeline": [{"$match": {"qty": {"$gte": 7}}}]})
    assert [d["_id"] for d in run.find("big")] == [7, 9]
    infos = {c["name"]: c for c in run({"listCollections": 1})["cursor"]["firstBatch"]}
    assert infos["big"]["type"] == "view" and infos["big"]["options"]["viewOn"] == "active"
    assert infos["orders"]["type"] == "collection"


def test_writes_and_indexes_on_a_view_are_refused(run):
    err = run.error({"insert": "active", "documents": [{"x": 1}]})
    assert err["code"] == 166 and err["errmsg"] == "Namespace test.active is a view, not a collection"
    assert run.error({"update": "active", "updates": [{"q": {}, "u": {"$set": {"x": 1}}}]})["code"] == 166
    assert run.error({"delete": "active", "deletes": [{"q": {}, "limit": 0}]})["code"] == 166
    assert run.error({"createIndexes": "active", "indexes": [{"key": {"x": 1}, "name": "x_1"}]})["code"] == 166
    assert run.error({"findAndModify": "active", "query": {}, "remove": True})["code"] == 166
    run({"drop": "active"})
    assert run.find("active") == []


def test_out_and_merge_write_their_results(run):
    run({"aggregate": "orders", "pipeline": [{"$match": {"qty": {"$lt": 3}}}, {"$out": "small"}], "cursor": {}})
    assert [d["_id"] for d in run.find("small")] == [0, 1, 2]
    run({"aggregate": "orders", "pipeline": [{"$match": {"qty": {"$lt": 5}}}, {"$project": {"qty": 1}},
                                             {"$merge": {"into": "small", "whenMatched": "keepExisting"}}],
         "cursor": {}})
    assert [d["_id"] for d in run.find("small")] == [0, 1, 2, 3, 4]
    assert run.find("small", {"_id": 0}) == [{"_id": 0, "status": "B", "qty": 0}]
    err = run.error({"aggregate": "orders", "pipeline": [{"$merge": {"into": "small", "whenMatched": "fail"}}],
                     "cursor": {}})
    assert err["code"] == 11000 and err["keyPattern"] == {"_id": 1} and err["keyValue"] == {"_id": 0}
    run({"aggregate": "orders", "pipeline": [{"$match": {"_id": 9}},
                                             {"$merge": {"into": "small", "whenNotMatched": "discard"}}], "cursor": {}})
    assert run({"count": "small"})["n"] == 5
