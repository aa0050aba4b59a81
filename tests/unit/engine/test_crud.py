"""CRUD through the command layer, on both storage engines."""
from __future__ import annotations

import threading

import pytest
from bson.objectid import ObjectId
from support.runner import Runner


@pytest.fixture
def run(engine):
    return Runner(engine)


def test_insert_generates_object_id_first_and_find_returns_in_insertion_order(run):
    assert run.insert("c", {"a": 1}, {"b": 2, "_id": 7})["n"] == 2
    docs = run.find("c")
    assert isinstance(docs[0]["_id"], ObjectId)
    assert list(docs[1]) == ["_id", "b"] and docs[1]["_id"] == 7


def test_duplicate_id_reports_mongod_write_error(run):
    run.insert("c", {"_id": 1})
    reply = run.insert("c", {"_id": 1})
    (err,) = reply["writeErrors"]
    assert reply["n"] == 0
    assert err["index"] == 0 and err["code"] == 11000
    assert err["errmsg"] == "E11000 duplicate key error collection: test.c index: _id_ dup key: { _id: 1 }"
    assert err["keyPattern"] == {"_id": 1} and err["keyValue"] == {"_id": 1}


def test_ordered_insert_stops_at_first_error_and_keeps_earlier_documents(run):
    reply = run.insert("c", {"_id": 1}, {"_id": 1}, {"_id": 2})
    assert reply["n"] == 1 and [e["index"] for e in reply["writeErrors"]] == [1]
    assert [d["_id"] for d in run.find("c")] == [1]


def test_unordered_insert_continues_past_errors(run):
    reply = run.insert("c", {"_id": 1}, {"_id": 1}, {"_id": 2}, {"_id": 2}, ordered=False)
    assert reply["n"] == 2 and [e["index"] for e in reply["writeErrors"]] == [1, 3]


def test_array_id_is_rejected(run):
    reply = run.insert("c", {"_id": [1, 2]})
    assert reply["writeErrors"][0]["code"] == 53


def test_update_inc_push_and_upsert(run):
    run.insert("books", {"_id": 123456789, "available": 2, "checkout": []})
    reply = run({"update": "books", "updates": [
        {"q": {"_id": 123456789, "available": {"$gt": 0}},
         "u": {"$inc": {"available": -1}, "$push": {"checkout": {"by": "abc"}}}}]})
    assert reply["n"] == 1 and reply["nModified"] == 1
    assert run.find("books") == [{"_id": 123456789, "available": 1, "checkout": [{"by": "abc"}]}]
    reply = run({"update": "books", "updates": [{"q": {"_id": 5, "x": 1}, "u": {"$set": {"y": 2}}, "upsert": True}]})
    assert reply["n"] == 1 and reply["nModified"] == 0 and reply["upserted"] == [{"index": 0, "_id": 5}]
    assert run.find("books", {"_id": 5}) == [{"_id": 5, "x": 1, "y": 2}]


def test_noop_update_is_matched_but_not_modified(run):
    run.insert("c", {"_id": 1, "a": 1})
    reply = run({"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$set": {"a": 1}}}]})
    assert reply["n"] == 1 and reply["nModified"] == 0


def test_update_cannot_change_id(run):
    run.insert("c", {"_id": 1, "a": 1})
    reply = run({"update": "c", "updates": [{"q": {"_id": 1}, "u": {"_id": 2, "a": 1}}]})
    assert reply["writeErrors"][0]["code"] == 66


def test_update_many_and_delete(run):
    run.insert("c", *({"_id": i, "g": i % 2} for i in range(10)))
    assert run({"update": "c", "updates": [{"q": {"g": 0}, "u": {"$set": {"even": True}}, "multi": True}]})["nModified"] == 5
    assert run({"delete": "c", "deletes": [{"q": {"even": True}, "limit": 0}]})["n"] == 5
    assert run({"delete": "c", "deletes": [{"q": {}, "limit": 1}]})["n"] == 1
    assert len(run.find("c")) == 4


def test_concurrent_increments_are_atomic(run, engine):
    run.insert("c", {"_id": 1, "n": 0})

    def work():
        r = Runner(engine)
        for _ in range(1000):
            r({"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$inc": {"n": 1}}}]})

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert run.find("c") == [{"_id": 1, "n": 4000}]


def test_sort_skip_limit_projection(run):
    run.insert("c", *({"_id": i, "a": i % 3, "b": -i} for i in range(9)))
    docs = run.find("c", {}, sort={"a": -1, "b": 1}, skip=1, limit=3, projection={"b": 1})
    assert docs == [{"_id": 5, "b": -5}, {"_id": 2, "b": -2}, {"_id": 7, "b": -7}]


def test_document_too_large(run):
    reply = run.insert("c", {"_id": 1, "big": "x" * (16 * 1024 * 1024)})
    assert reply["writeErrors"][0]["code"] == 10334


def test_idle_cursors_time_out_unless_no_cursor_timeout(run, monkeypatch):
    import ginkgodb.engine.cursors as cursors
    run.insert("c", *({"_id": i} for i in range(10)))
    idle = run({"find": "c", "batchSize": 1})["cursor"]["id"]
    pinned = run({"find": "c", "batchSize": 1, "noCursorTimeout": True})["cursor"]["id"]
    monkeypatch.setattr(cursors, "IDLE_TIMEOUT", 0.0)
    run({"find": "c", "batchSize": 1})  # registering a cursor reaps idle ones
    assert run.error({"getMore": idle, "collection": "c"})["code"] == 43
    assert len(run({"getMore": pinned, "collection": "c"})["cursor"]["nextBatch"]) == 9


def test_batches_stop_at_16_mib(run):
    big = "x" * (4 * 1024 * 1024)
    run.insert("c", *({"_id": i, "s": big} for i in range(6)))
    first = run({"find": "c", "batchSize": 10})
    assert len(first["cursor"]["firstBatch"]) == 3  # a 4th 4 MiB document would pass 16 MiB
    rest = run({"getMore": first["cursor"]["id"], "collection": "c"})
    assert [d["_id"] for d in rest["cursor"]["nextBatch"]] == [3, 4, 5]


def test_count_without_a_filter_stays_exact_through_writes_and_rollbacks(run, engine):
    run.insert("c", *({"_id": i} for i in range(10)))
    assert run({"count": "c"})["n"] == 10  # counted once here, then maintained
    run.insert("c", {"_id": 10}, {"_id": 1}, {"_id": 11}, ordered=False)  # one duplicate
    assert run({"count": "c"})["n"] == 12
    run({"delete": "c", "deletes": [{"q": {"_id": {"$lt": 5}}, "limit": 0}]})
    assert run({"count": "c"})["n"] == 7
    with pytest.raises(RuntimeError):
        with engine.write() as batch:  # a write that rolls back leaves the count alone
            from ginkgodb.engine.records import insert_record
            state = batch.collection("test", "c")
            insert_record(batch, state, {"_id": 99}, __import__("bson").encode({"_id": 99}))
            raise RuntimeError("abort")
    assert run({"count": "c"})["n"] == 7 == len(run.find("c"))
    run({"create": "capped", "capped": True, "size": 100000, "max": 3})
    run.insert("capped", *({"_id": i} for i in range(5)))
    assert run({"count": "capped"})["n"] == 3



def test_a_top_level_empty_timestamp_becomes_the_current_one_on_insert(run, engine):
    import bson
    from bson.raw_bson import RawBSONDocument
    from bson.timestamp import Timestamp
    doc = {"_id": 1, "ts": Timestamp(0, 0), "nested": {"ts": Timestamp(0, 0)}}
    engine.insert("test", "c", [doc, RawBSONDocument(bson.encode({"_id": 2, "ts": Timestamp(0, 0)}))])
    assert doc["ts"] == Timestamp(0, 0)  # the caller's document is not changed
    stored = {d["_id"]: d for d in run.find("c")}
    first, second = stored[1]["ts"], stored[2]["ts"]
    assert first.time > 0 and second.time > 0 and first != second
    assert stored[1]["nested"]["ts"] == Timestamp(0, 0)  # only top-level fields, as mongod
