"""pymongo against `ginkgodb serve`, unchanged: handshake, CRUD, cursors, bulk writes, indexes,
explain, and the exception classes and codes pymongo raises."""
from __future__ import annotations

import asyncio

import pymongo
import pytest
from bson import ObjectId
from pymongo import monitoring
from pymongo.errors import BulkWriteError, CollectionInvalid, DuplicateKeyError, OperationFailure


class Recorder(monitoring.CommandListener):
    def __init__(self) -> None:
        self.names: list[str] = []
        self.replies: dict[str, dict] = {}

    def started(self, event):
        self.names.append(event.command_name)

    def succeeded(self, event):
        self.replies[event.command_name] = event.reply

    def failed(self, event):
        pass


@pytest.fixture
def recorded(server_address):
    recorder = Recorder()
    c = pymongo.MongoClient(*server_address, event_listeners=[recorder], serverSelectionTimeoutMS=5000)
    yield c, recorder
    c.close()


def test_handshake_ping_and_server_info(client):
    assert client.admin.command("ping") == {"ok": 1.0}
    info = client.server_info()
    assert info["version"].startswith("7.0.") and info["versionArray"][:2] == [7, 0]
    assert client.admin.command("hello")["maxWireVersion"] == 21


def test_insert_find_update_delete(db):
    things = db.things
    one = things.insert_one({"name": "a", "n": 1})
    assert isinstance(one.inserted_id, ObjectId)
    many = things.insert_many([{"_id": i, "name": f"n{i}", "n": i} for i in range(10)])
    assert many.inserted_ids == list(range(10))
    assert things.find_one({"_id": 3}) == {"_id": 3, "name": "n3", "n": 3}
    assert things.update_one({"_id": 3}, {"$inc": {"n": 10}}).modified_count == 1
    assert things.find_one({"_id": 3})["n"] == 13
    assert things.update_many({"n": {"$lt": 5}}, {"$set": {"small": True}}).matched_count == 5
    assert things.replace_one({"_id": 4}, {"name": "four"}).modified_count == 1
    assert things.find_one({"_id": 4}) == {"_id": 4, "name": "four"}
    doc = things.find_one_and_update({"_id": 5}, {"$set": {"x": 1}},
                                     return_document=pymongo.ReturnDocument.AFTER)
    assert doc["x"] == 1
    assert things.delete_one({"_id": 0}).deleted_count == 1
    assert things.delete_many({"small": True}).deleted_count == 3
    assert things.count_documents({}) == 7
    assert things.estimated_document_count() == 7
    assert sorted(things.distinct("n")) == [5, 6, 7, 8, 9, 13]


def test_upsert_reports_the_new_id(db):
    result = db.c.update_one({"_id": "k"}, {"$set": {"v": 1}}, upsert=True)
    assert result.upserted_id == "k" and db.c.find_one() == {"_id": "k", "v": 1}


def test_find_with_sort_skip_limit_projection(db):
    db.c.insert_many([{"_id": i, "a": i % 3, "b": i} for i in range(20)])
    got = list(db.c.find({"a": 1}, {"_id": 0, "b": 1}).sort("b", -1).skip(1).limit(3))
    assert got == [{"b": 16}, {"b": 13}, {"b": 10}]


def test_cursor_spans_several_get_more_batches(recorded, db):
    db.c.insert_many([{"_id": i} for i in range(100)])
    client, recorder = recorded
    ids = [d["_id"] for d in client[db.name].c.find().sort("_id").batch_size(7)]
    assert ids == list(range(100))
    assert recorder.names.count("getMore") >= 14


def test_closing_a_cursor_early_kills_it(recorded, db):
    db.c.insert_many([{"_id": i} for i in range(50)])
    client, recorder = recorded
    cursor = client[db.name].c.find().batch_size(5)
    next(cursor)
    cursor.close()
    assert "killCursors" in recorder.names
    reply = recorder.replies["killCursors"]
    assert len(reply["cursorsKilled"]) == 1 and reply["cursorsNotFound"] == []


def test_unordered_bulk_insert_reports_every_duplicate(db):
    db.c.insert_one({"_id": 1})
    with pytest.raises(BulkWriteError) as info:
        db.c.insert_many([{"_id": 1}, {"_id": 2}, {"_id": 1}, {"_id": 3}], ordered=False)
    details = info.value.details
    assert details["nInserted"] == 2
    assert [(e["index"], e["code"]) for e in details["writeErrors"]] == [(0, 11000), (2, 11000)]


def test_ordered_bulk_write_stops_at_the_first_error(db):
    with pytest.raises(BulkWriteError) as info:
        db.c.bulk_write([pymongo.InsertOne({"_id": 1}), pymongo.InsertOne({"_id": 1}),
                         pymongo.InsertOne({"_id": 2})])
    assert info.value.details["nInserted"] == 1 and db.c.count_documents({}) == 1


def test_mixed_bulk_write(db):
    result = db.c.bulk_write([pymongo.InsertOne({"_id": 1, "v": 1}), pymongo.InsertOne({"_id": 2, "v": 2}),
                              pymongo.UpdateOne({"_id": 1}, {"$set": {"v": 10}}),
                              pymongo.DeleteOne({"_id": 2})])
    assert (result.inserted_count, result.modified_count, result.deleted_count) == (2, 1, 1)


def test_unique_index_and_duplicate_key_error(db):
    assert db.c.create_index("email", unique=True) == "email_1"
    assert db.c.index_information()["email_1"]["unique"] is True
    db.c.insert_one({"email": "a@x"})
    with pytest.raises(DuplicateKeyError) as info:
        db.c.insert_one({"email": "a@x"})
    assert info.value.code == 11000 and "E11000 duplicate key error" in str(info.value)
    db.c.drop_index("email_1")
    assert list(db.c.index_information()) == ["_id_"]


def test_explain_shows_the_index_scan(db):
    db.c.insert_many([{"_id": i, "a": i} for i in range(30)])
    db.c.create_index("a")
    plan = db.c.find({"a": {"$gt": 25}}).explain()
    assert plan["queryPlanner"]["namespace"] == f"{db.name}.c"
    assert "IXSCAN" in str(plan["queryPlanner"]["winningPlan"])


def test_error_classes_and_codes(client, db):
    with pytest.raises(OperationFailure) as info:
        db.c.find_one({"a": {"$nope": 1}})
    assert info.value.code == 2
    db.create_collection("made")
    with pytest.raises(CollectionInvalid):
        db.create_collection("made")
    with pytest.raises(OperationFailure) as info:
        client.admin.command("noSuchCommand")
    assert info.value.code == 59


def test_databases_and_collections(client, db):
    db.c.insert_one({"a": 1})
    assert db.name in client.list_database_names()
    assert db.list_collection_names() == ["c"]
    db.c.rename("d")
    assert db.list_collection_names() == ["d"]
    db.drop_collection("d")
    assert db.list_collection_names() == []


def test_zlib_compressed_connection_does_crud(server_address, db):
    c = pymongo.MongoClient(*server_address, compressors="zlib", serverSelectionTimeoutMS=5000)
    try:
        coll = c[db.name].z
        coll.insert_many([{"_id": i, "pad": "x" * 1000} for i in range(200)])
        assert len(list(coll.find())) == 200
    finally:
        c.close()


def test_async_client(server_address, db):
    async def run():
        c = pymongo.AsyncMongoClient(*server_address, serverSelectionTimeoutMS=5000)
        try:
            coll = c[db.name].a
            await coll.insert_one({"_id": 1, "v": "async"})
            return await coll.find_one({"_id": 1})
        finally:
            await c.close()
    assert asyncio.run(run()) == {"_id": 1, "v": "async"}


def test_write_batch_over_max_write_batch_size_is_refused(db):
    hello = db.client.admin.command("hello")
    too_many = [{}] * (hello["maxWriteBatchSize"] + 1)
    with pytest.raises(OperationFailure) as info:
        db.command("insert", "c", documents=too_many)
    assert info.value.code == 16
    assert "Write batch sizes must be between 1 and 100000. Got 100001 operations." in str(info.value)


def test_server_status_and_current_op_from_a_driver(client):
    status = client.admin.command("serverStatus")
    assert status["connections"]["current"] >= 1 and status["opcounters"]["command"] > 0
    ops = client.admin.command("currentOp")["inprog"]
    assert any("currentOp" in op["command"] for op in ops)
    assert client.admin.command("getLog", "global")["totalLinesWritten"] > 0


def test_motor(server_address, db):
    motor = pytest.importorskip("motor.motor_asyncio", reason="motor is not installed (pip install motor)")

    async def run():
        c = motor.AsyncIOMotorClient(*server_address, serverSelectionTimeoutMS=5000)
        try:
            coll = c[db.name].m
            await coll.insert_many([{"_id": i} for i in range(30)])
            ids = [d["_id"] async for d in coll.find().sort("_id", -1).batch_size(4)]
            return ids, (await c.admin.command("ping"))["ok"]
        finally:
            c.close()
    ids, ok = asyncio.run(run())
    assert ids == list(range(29, -1, -1)) and ok == 1.0


def test_exhaust_cursor_works_without_streamed_replies(db):
    db.c.insert_many([{"_id": i} for i in range(50)])
    got = [d["_id"] for d in db.c.find(cursor_type=pymongo.CursorType.EXHAUST).sort("_id").batch_size(7)]
    assert got == list(range(50))
