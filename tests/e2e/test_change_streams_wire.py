"""Change streams over the wire: pymongo's and motor's watch() against `ginkgodb serve`
(a standalone server: ginkgodb offers change streams without a replica set)."""
from __future__ import annotations

import asyncio
import statistics
import threading
import time

import pymongo
import pytest
from pymongo.errors import OperationFailure

pytestmark = pytest.mark.slow


def test_pymongo_watch_collection_database_and_client(client, db):
    coll = db.c
    with coll.watch(max_await_time_ms=100) as cs, db.watch(max_await_time_ms=100) as ds, \
            client.watch(max_await_time_ms=100) as all_changes:
        coll.insert_one({"_id": 1, "a": 1})
        coll.update_one({"_id": 1}, {"$set": {"a": 2}})
        db.other.insert_one({"_id": 2})
        ins, upd = cs.next(), cs.next()
        assert ins["operationType"] == "insert" and ins["fullDocument"] == {"_id": 1, "a": 1}
        assert upd["updateDescription"]["updatedFields"] == {"a": 2}
        assert [ds.next()["documentKey"]["_id"] for _ in range(3)] == [1, 1, 2]
        seen = [all_changes.next() for _ in range(3)]
        assert {e["ns"]["coll"] for e in seen} == {"c", "other"}
        assert cs.resume_token is not None


def test_pymongo_resume_and_invalidate(db):
    coll = db.c
    coll.insert_one({"_id": 0})
    with coll.watch(max_await_time_ms=100) as stream:
        coll.insert_many([{"_id": 1}, {"_id": 2}])
        first = stream.next()
    with coll.watch(resume_after=first["_id"], max_await_time_ms=100) as again:
        assert again.next()["documentKey"] == {"_id": 2}
    with coll.watch(max_await_time_ms=100) as stream:
        coll.drop()
        assert stream.next()["operationType"] == "drop"
        invalidate = stream.next()
        assert invalidate["operationType"] == "invalidate"
        assert not stream.alive
    with pytest.raises(OperationFailure) as info:
        coll.watch(resume_after=invalidate["_id"])
    assert info.value.code == 260


def test_pymongo_pre_and_post_images(db):
    db.create_collection("c", changeStreamPreAndPostImages={"enabled": True})
    db.c.insert_one({"_id": 1, "n": 1})
    with db.c.watch(full_document="required", full_document_before_change="required",
                    max_await_time_ms=100) as stream:
        db.c.update_one({"_id": 1}, {"$inc": {"n": 1}})
        event = stream.next()
    assert event["fullDocument"] == {"_id": 1, "n": 2} and event["fullDocumentBeforeChange"] == {"_id": 1, "n": 1}


def test_commit_to_event_latency(client, db):
    """awaitData getMores wake on commit: the time from sending an insert to receiving its event."""
    coll = db.latency
    writer = pymongo.MongoClient(*client.address)
    delays = []
    try:
        with coll.watch(max_await_time_ms=5000) as stream:
            for i in range(30):
                sent: list = []

                def write(i: int = i, sent: list = sent) -> None:
                    sent.append(time.perf_counter())
                    writer[db.name].latency.insert_one({"_id": i})

                threading.Timer(0.01, write).start()
                stream.next()
                delays.append(time.perf_counter() - sent[0])
    finally:
        writer.close()
    p50 = statistics.median(delays)
    print(f"\ncommit to event over the wire: p50 {p50 * 1000:.1f} ms, max {max(delays) * 1000:.1f} ms")
    assert p50 < 0.25   # woken by the commit; a polling loop or the 5 s await would show


def test_motor_watch(server_uri):
    motor_asyncio = pytest.importorskip("motor.motor_asyncio")

    async def main() -> list:
        client = motor_asyncio.AsyncIOMotorClient(server_uri, serverSelectionTimeoutMS=5000)
        coll = client.e2e_motor.c
        await coll.drop()
        try:
            async with coll.watch(max_await_time_ms=200) as stream:
                await coll.insert_one({"_id": 1})
                await coll.delete_one({"_id": 1})
                return [(await stream.next())["operationType"], (await stream.next())["operationType"]]
        finally:
            await client.drop_database("e2e_motor")
            client.close()

    assert asyncio.run(main()) == ["insert", "delete"]
