"""Change streams as mongod 7.0 (docs/design/change-streams.md), through the embedded client."""
from __future__ import annotations

import threading
import time

import bson
import pytest
from bson.int64 import Int64
from pymongo.errors import OperationFailure
from support.engines import make_kv

from ginkgodb.client import MongoClient
from ginkgodb.client.runner import EngineChannel
from ginkgodb.engine import Engine


@pytest.fixture
def client(engine):
    c = MongoClient(_channel=EngineChannel(engine))
    yield c
    c.close()


def drain(stream, n: int, timeout: float = 5.0) -> list:
    out = []
    deadline = time.monotonic() + timeout
    while len(out) < n and time.monotonic() < deadline and stream.alive:
        doc = stream.try_next()
        if doc is not None:
            out.append(doc)
    return out


def test_crud_events_have_mongod_shapes(client):
    coll = client.db.c
    with coll.watch(max_await_time_ms=50) as stream:
        coll.insert_one({"_id": 1, "a": 1, "arr": [1, 2]})
        coll.update_one({"_id": 1}, {"$set": {"a": 2, "n.x": 1}, "$unset": {"gone": 1}, "$push": {"arr": 3}})
        coll.replace_one({"_id": 1}, {"b": 1})
        coll.delete_one({"_id": 1})
        ins, upd, rep, dele = drain(stream, 4)
    uuid = client.db.command("listCollections")["cursor"]["firstBatch"][0]["info"]["uuid"]
    assert uuid is not None
    assert list(ins) == ["_id", "operationType", "clusterTime", "wallTime", "fullDocument", "ns", "documentKey"]
    assert ins["fullDocument"] == {"_id": 1, "a": 1, "arr": [1, 2]} and ins["documentKey"] == {"_id": 1}
    assert ins["ns"] == {"db": "db", "coll": "c"} and isinstance(ins["clusterTime"], bson.Timestamp)
    assert list(upd) == ["_id", "operationType", "clusterTime", "wallTime", "ns", "documentKey", "updateDescription"]
    assert upd["updateDescription"] == {"updatedFields": {"a": 2, "arr.2": 3, "n": {"x": 1}}, "removedFields": [],
                                        "truncatedArrays": []}
    assert rep["operationType"] == "replace" and rep["fullDocument"] == {"_id": 1, "b": 1}
    assert dele["operationType"] == "delete" and dele["documentKey"] == {"_id": 1} and "fullDocument" not in dele
    assert ins["clusterTime"] < upd["clusterTime"] < rep["clusterTime"] < dele["clusterTime"]


def test_truncated_arrays_removed_fields_and_disambiguated_paths(client):
    coll = client.db.c
    coll.insert_one({"_id": 1, "array": ["foo", {"a": "bar"}, 1, 2, 3], "a": {"1": 1}, "x": 1})
    with coll.watch(show_expanded_events=True, max_await_time_ms=50) as stream:
        coll.update_one({"_id": 1}, [{"$set": {"array": ["foo", {"a": "bar"}]}}])
        coll.update_one({"_id": 1}, {"$set": {"a.1": 2}, "$unset": {"x": ""}})
        first, second = drain(stream, 2)
    assert first["updateDescription"] == {"updatedFields": {}, "removedFields": [],
                                          "truncatedArrays": [{"field": "array", "newSize": 2}],
                                          "disambiguatedPaths": {}}
    assert second["updateDescription"] == {"updatedFields": {"a.1": 2}, "removedFields": ["x"],
                                           "truncatedArrays": [], "disambiguatedPaths": {"a.1": ["a", "1"]}}
    coll.insert_one({"_id": 2, "a": [{"1": 1}]})
    with coll.watch(show_expanded_events=True, max_await_time_ms=50) as stream:
        coll.update_one({"_id": 2}, {"$set": {"a.0.1": 2}})
        event, = drain(stream, 1)
    assert event["updateDescription"]["disambiguatedPaths"] == {"a.0.1": ["a", 0, "1"]}


def test_database_and_cluster_streams(client):
    db_stream = client.db.watch(max_await_time_ms=50)
    all_stream = client.watch(max_await_time_ms=50)
    client.db.a.insert_one({"_id": "a"})
    client.other.b.insert_one({"_id": "b"})
    client.db["system.js"].insert_one({"_id": "hidden"})
    client.admin.c.insert_one({"_id": "admin"})
    client.local.c.insert_one({"_id": "local"})
    client.db.a.insert_one({"_id": "last"})
    assert [e["documentKey"]["_id"] for e in drain(db_stream, 2)] == ["a", "last"]
    assert [e["documentKey"]["_id"] for e in drain(all_stream, 3)] == ["a", "b", "last"]
    db_stream.close()
    all_stream.close()
    assert not db_stream.alive


def test_a_new_stream_sees_only_later_commits(client):
    client.db.c.insert_one({"_id": "before"})
    with client.db.c.watch(max_await_time_ms=50) as stream:
        assert stream.try_next() is None
        client.db.c.insert_one({"_id": "after"})
        assert drain(stream, 1)[0]["documentKey"] == {"_id": "after"}


def test_resume_after_start_at_and_post_batch_tokens(client):
    coll = client.db.c
    stream = coll.watch(max_await_time_ms=50)
    start = stream.resume_token
    assert set(start) == {"_data"}                      # a high-water mark before any event
    coll.insert_many([{"_id": i} for i in range(3)])
    events = drain(stream, 3)
    stream.close()
    with coll.watch(resume_after=events[0]["_id"], max_await_time_ms=50) as again:
        assert [e["documentKey"]["_id"] for e in drain(again, 2)] == [1, 2]
    with coll.watch(start_at_operation_time=events[1]["clusterTime"], max_await_time_ms=50) as again:
        assert [e["documentKey"]["_id"] for e in drain(again, 2)] == [1, 2]
    with coll.watch(resume_after=start, max_await_time_ms=50) as again:   # a high-water mark token
        assert [e["documentKey"]["_id"] for e in drain(again, 3)] == [0, 1, 2]
    # the token an empty batch leaves resumes with nothing missed or repeated
    with coll.watch(max_await_time_ms=50) as idle:
        assert idle.try_next() is None
        token = idle.resume_token
    coll.insert_one({"_id": "later"})
    with coll.watch(resume_after=token, max_await_time_ms=50) as again:
        assert [e["documentKey"]["_id"] for e in drain(again, 1)] == ["later"]
        assert again.try_next() is None


def test_tokens_of_another_stream_are_refused(client):
    client.db.other.insert_one({"_id": 1})
    with client.db.watch(max_await_time_ms=50) as stream:
        client.db.other.insert_one({"_id": 2})
        client.db.c.insert_one({"_id": 3})
        foreign = drain(stream, 1)[0]["_id"]
    with pytest.raises(OperationFailure) as info:
        drain(client.db.c.watch(resume_after=foreign, max_await_time_ms=50), 1)
    assert info.value.code == 280 and "resume token was not found" in str(info.value)
    assert "NonResumableChangeStreamError" in info.value.details.get("errorLabels", [])


def test_invalidate_after_drop_and_rename(client):
    coll = client.db.c
    coll.insert_one({})
    with coll.watch(max_await_time_ms=50) as stream:
        coll.drop()
        drop, invalidate = drain(stream, 2)
        assert not stream.alive
    assert drop["operationType"] == "drop" and drop["ns"] == {"db": "db", "coll": "c"}
    assert list(invalidate) == ["_id", "operationType", "clusterTime", "wallTime"]
    assert invalidate["operationType"] == "invalidate" and invalidate["clusterTime"] == drop["clusterTime"]
    # startAfter the invalidate: the stream goes on (resumeAfter it is refused)
    with pytest.raises(OperationFailure) as info:
        coll.watch(resume_after=invalidate["_id"])
    assert info.value.code == 260
    with coll.watch(start_after=invalidate["_id"], max_await_time_ms=50) as again:
        coll.insert_one({"_id": "new"})
        assert drain(again, 1)[0]["documentKey"] == {"_id": "new"}
    # a rename invalidates the streams of both names
    client.db.d.insert_one({})
    source, target = coll.watch(max_await_time_ms=50), client.db.d.watch(max_await_time_ms=50)
    client.admin.command("renameCollection", "db.c", to="db.d", dropTarget=True)
    for stream in (source, target):
        rename, inv = drain(stream, 2)
        assert rename["operationType"] == "rename" and rename["ns"] == {"db": "db", "coll": "c"}
        assert rename["to"] == {"db": "db", "coll": "d"} and list(rename)[0] == "to"
        assert inv["operationType"] == "invalidate" and not stream.alive


def test_drop_database_invalidates_a_database_stream(client):
    client.db.a.insert_one({})
    client.db.b.insert_one({})
    with client.db.watch(max_await_time_ms=50) as stream, client.watch(max_await_time_ms=50) as everything:
        client.drop_database("db")
        kinds = [e["operationType"] for e in drain(stream, 4)]
        assert kinds == ["drop", "drop", "dropDatabase", "invalidate"] and not stream.alive
        assert [e["operationType"] for e in drain(everything, 3)] == ["drop", "drop", "dropDatabase"]
        assert everything.alive
    assert True


def test_expanded_events(client):
    db = client.db
    with db.watch(show_expanded_events=True, max_await_time_ms=50) as stream:
        db.create_collection("c", changeStreamPreAndPostImages={"enabled": False})
        db.c.create_index("x", name="x_1")
        db.c.drop_index("x_1")
        db.command("collMod", "c", validator={"x": {"$exists": True}})
        db.create_collection("v", viewOn="c", pipeline=[])
        db.c.insert_one({"_id": 1, "x": 1})
        events = drain(stream, 6)
    create, cix, dix, mod, view, ins = events
    uuid = db.command("listCollections", filter={"name": "c"})["cursor"]["firstBatch"][0]["info"]["uuid"]
    assert create["operationType"] == "create" and create["collectionUUID"] == uuid
    assert create["operationDescription"] == {"changeStreamPreAndPostImages": {"enabled": False},
                                              "idIndex": {"v": 2, "key": {"_id": 1}, "name": "_id_"}}
    assert cix["operationDescription"] == {"indexes": [{"v": 2, "key": {"x": 1}, "name": "x_1"}]}
    assert dix["operationType"] == "dropIndexes" and dix["operationDescription"]["indexes"][0]["name"] == "x_1"
    assert mod["operationType"] == "modify"
    assert mod["operationDescription"] == {"validator": {"x": {"$exists": True}}}
    assert mod["stateBeforeChange"] == {"collectionOptions": {
        "uuid": uuid, "changeStreamPreAndPostImages": {"enabled": False}}}
    assert view["operationType"] == "create" and view["operationDescription"] == {"viewOn": "c", "pipeline": []}
    assert ins["collectionUUID"] == uuid
    with db.watch(max_await_time_ms=50) as plain:                        # none of them without the option
        db.c.create_index("y")
        db.c.insert_one({"_id": 2, "x": 2})
        assert [e["operationType"] for e in drain(plain, 1)] == ["insert"]


def test_pre_and_post_images(client):
    db = client.db
    db.create_collection("c", changeStreamPreAndPostImages={"enabled": True})
    db.c.insert_one({"_id": 1, "n": 1})
    options = dict(full_document="whenAvailable", full_document_before_change="required", max_await_time_ms=50)
    with db.c.watch(**options) as stream:
        db.c.update_one({"_id": 1}, {"$inc": {"n": 1}})
        db.c.replace_one({"_id": 1}, {"r": 1})
        db.c.delete_one({"_id": 1})
        upd, rep, dele = drain(stream, 3)
    assert upd["fullDocument"] == {"_id": 1, "n": 2} and upd["fullDocumentBeforeChange"] == {"_id": 1, "n": 1}
    assert list(upd)[-1] == "fullDocumentBeforeChange"
    assert rep["fullDocumentBeforeChange"] == {"_id": 1, "n": 2} and rep["fullDocument"] == {"_id": 1, "r": 1}
    assert dele["fullDocumentBeforeChange"] == {"_id": 1, "r": 1}
    db.plain.insert_one({"_id": 1})
    with db.plain.watch(full_document="whenAvailable", full_document_before_change="whenAvailable",
                        max_await_time_ms=50) as stream:
        db.plain.update_one({"_id": 1}, {"$set": {"x": 1}})
        event, = drain(stream, 1)
    assert event["fullDocument"] is None and event["fullDocumentBeforeChange"] is None
    for option in ({"full_document": "required"}, {"full_document_before_change": "required"}):
        with db.plain.watch(max_await_time_ms=50, **option) as stream:
            db.plain.update_one({"_id": 1}, {"$inc": {"x": 1}})
            with pytest.raises(OperationFailure) as info:
                drain(stream, 1)
            assert info.value.code == 47


def test_update_lookup_reads_the_current_document(client):
    coll = client.db.c
    coll.insert_one({"_id": 1, "n": 0})
    with coll.watch(full_document="updateLookup", max_await_time_ms=50) as stream:
        coll.update_one({"_id": 1}, {"$inc": {"n": 1}})
        coll.update_one({"_id": 1}, {"$inc": {"n": 1}})
        coll.delete_one({"_id": 1})
        first, second, dele = drain(stream, 3)
    assert first["fullDocument"] is None and second["fullDocument"] is None   # deleted by the time it is read
    assert list(first).index("fullDocument") == list(first).index("wallTime") + 1
    assert "fullDocument" not in dele
    with coll.watch(full_document="updateLookup", max_await_time_ms=50) as stream:
        coll.insert_one({"_id": 2, "n": 0})
        coll.update_one({"_id": 2}, {"$inc": {"n": 5}})
        _, upd = drain(stream, 2)
    assert upd["fullDocument"] == {"_id": 2, "n": 5}


def test_transaction_events_share_time_and_carry_the_session(client, engine):
    coll = client.db.c
    coll.insert_one({"_id": 0, "n": 0})
    lsid = {"id": bson.Binary(b"\x05" * 16, 4)}
    with coll.watch(max_await_time_ms=50) as stream:
        with engine.write() as batch:
            from ginkgodb.engine.records import insert_record, update_record
            state = batch.collection("db", "c")
            insert_record(batch, state, {"_id": 1}, bson.encode({"_id": 1}))
            update_record(batch, state, 1, {"_id": 0, "n": 0}, bson.encode({"_id": 0, "n": 0}), {"_id": 0, "n": 1})
            batch.txn_info = {"lsid": lsid, "txnNumber": Int64(4), "autocommit": False}
        with pytest.raises(RuntimeError):   # an aborted batch never reaches the oplog
            with engine.write() as batch:
                insert_record(batch, batch.collection("db", "c"), {"_id": 9}, bson.encode({"_id": 9}))
                raise RuntimeError("abort")
        coll.insert_one({"_id": 2})
        ins, upd, after = drain(stream, 3)
    assert list(ins)[:3] == ["txnNumber", "lsid", "_id"] and ins["txnNumber"] == 4 and ins["lsid"] == lsid
    assert ins["clusterTime"] == upd["clusterTime"] and ins["_id"] != upd["_id"]
    assert after["documentKey"] == {"_id": 2} and "txnNumber" not in after
    with coll.watch(resume_after=ins["_id"], max_await_time_ms=50) as again:   # resume inside a transaction
        assert [e["operationType"] for e in drain(again, 2)] == ["update", "insert"]


def test_later_stages(client):
    coll = client.db.c
    pipeline = [{"$match": {"operationType": "insert"}}, {"$project": {"fullDocument.secret": 0}},
                {"$addFields": {"seen": True}}]
    with coll.watch(pipeline, max_await_time_ms=50) as stream:
        coll.insert_one({"_id": 1, "secret": "s", "x": 1})
        coll.delete_one({"_id": 1})
        coll.insert_one({"_id": 2})
        first, second = drain(stream, 2)
    assert first["fullDocument"] == {"_id": 1, "x": 1} and first["seen"] is True
    assert second["documentKey"] == {"_id": 2}
    with pytest.raises(OperationFailure) as info:
        coll.watch([{"$group": {"_id": 1}}])
    assert info.value.code == 20 and info.value.details["errmsg"] == "$group is not permitted in a $changeStream pipeline"
    with pytest.raises(OperationFailure) as info:
        coll.watch([{"$unsupported": "foo"}])
    assert info.value.code == 40324
    with coll.watch([{"$project": {"_id": 0}}], max_await_time_ms=50) as stream:
        coll.insert_one({"_id": 3})
        with pytest.raises(OperationFailure) as info:
            drain(stream, 1)
        assert info.value.code == 280


@pytest.mark.parametrize("spec, code", [
    ({"bogus": 1}, 40415), ({"fullDocument": "sometimes"}, 2), ({"fullDocument": 1}, 14),
    ({"startAtOperationTime": 5}, 14), ({"resumeAfter": {"_data": "zz"}}, 9),
    ({"resumeAfter": {"_data": "826B0ECF310000000101000000000000"}, "startAtOperationTime": bson.Timestamp(1, 1)},
     40674),
    ({"showSystemEvents": True}, 238)])
def test_bad_specs(client, spec, code):
    with pytest.raises(OperationFailure) as info:
        client.db.command("aggregate", "c", pipeline=[{"$changeStream": spec}], cursor={})
    assert info.value.code == code


def test_where_a_stream_may_not_be_opened(client):
    client.db.create_collection("v", viewOn="c", pipeline=[])
    cases = [(client.db.v.watch, 166), (client.admin.watch, 73), (client.local.watch, 73),
             (client.db["system.views"].watch, 73)]
    for opener, code in cases:
        with pytest.raises(OperationFailure) as info:
            opener()
        assert info.value.code == code
    with pytest.raises(OperationFailure) as info:
        client.db.command("aggregate", "c", pipeline=[{"$match": {}}, {"$changeStream": {}}], cursor={})
    assert info.value.code == 40602


def test_history_lost_once_the_oplog_rolled_past(tmp_path):
    engine = Engine(make_kv("memory", tmp_path), oplog_bytes=2048)
    client = MongoClient(_channel=EngineChannel(engine))
    try:
        with client.db.c.watch(max_await_time_ms=50) as stream:
            client.db.c.insert_one({"_id": 0})
            token = drain(stream, 1)[0]["_id"]
        for i in range(1, 60):
            client.db.c.insert_one({"_id": i, "pad": "x" * 64})
        with pytest.raises(OperationFailure) as info:
            client.db.c.watch(resume_after=token)
        assert info.value.code == 286 and "NonResumableChangeStreamError" in info.value.details["errorLabels"]
    finally:
        client.close()
        engine.close()


def test_await_data_wakes_on_commit(client, engine):
    coll = client.db.c
    with coll.watch(max_await_time_ms=5000) as stream:
        threading.Timer(0.2, lambda: MongoClient(_channel=EngineChannel(engine)).db.c.insert_one({"_id": 1})).start()
        started = time.monotonic()
        event = stream.try_next()
        waited = time.monotonic() - started
    assert event is not None and event["documentKey"] == {"_id": 1}
    assert 0.15 < waited < 2.0, waited
    with coll.watch(max_await_time_ms=300) as stream:
        started = time.monotonic()
        assert stream.try_next() is None
        assert 0.25 < time.monotonic() - started < 3.0


def test_tailable_await_cursors_wake_on_commit(client, engine):
    from pymongo import CursorType
    client.db.create_collection("cap", capped=True, size=4096)
    client.db.cap.insert_one({"_id": 0})
    cursor = client.db.cap.find(cursor_type=CursorType.TAILABLE_AWAIT).max_await_time_ms(5000)
    assert next(cursor) == {"_id": 0}
    threading.Timer(0.2, lambda: MongoClient(_channel=EngineChannel(engine)).db.cap.insert_one({"_id": 1})).start()
    started = time.monotonic()
    doc = next(cursor)
    waited = time.monotonic() - started
    assert doc == {"_id": 1} and 0.15 < waited < 2.0, waited   # woken by the commit, not by the time limit
    cursor.close()


def test_the_client_resumes_after_its_cursor_is_killed(client):
    coll = client.db.c
    with coll.watch(max_await_time_ms=50) as stream:
        coll.insert_one({"_id": 1})
        assert drain(stream, 1)[0]["documentKey"] == {"_id": 1}
        client.db.command("killCursors", "c", cursors=[Int64(stream._cursor.cursor_id)])
        coll.insert_one({"_id": 2})
        assert drain(stream, 1)[0]["documentKey"] == {"_id": 2}      # resumed after CursorNotFound
        assert stream.alive
