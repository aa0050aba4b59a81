"""The embedded client sends the very commands pymongo sends.

The same script of operations runs through pymongo (against `ginkgodb serve` in a thread, its
commands captured by pymongo's own command monitoring) and through the embedded client (its
commands captured at the engine channel); the two command lists must be equal once the fields
that exist only on a connection (lsid, $clusterTime...) and the engine-chosen cursor ids are
set aside.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import bson
import pymongo
import pytest
from pymongo import DeleteMany, DeleteOne, IndexModel, InsertOne, ReplaceOne, UpdateMany, UpdateOne
from pymongo.monitoring import CommandListener
from pymongo.write_concern import WriteConcern

from ginkgodb import MongoClient

CONNECTION_FIELDS = {"lsid", "$clusterTime", "txnNumber", "$readPreference", "apiVersion"}
IGNORED_COMMANDS = {"endSessions", "ismaster", "hello", "isMaster"}


class Recorder(CommandListener):
    def __init__(self) -> None:
        self.commands: list[dict] = []

    def started(self, event: Any) -> None:
        self.commands.append(bson.decode(bson.encode(event.command)))

    def succeeded(self, event: Any) -> None:
        pass

    def failed(self, event: Any) -> None:
        pass


def normalised(commands: list[dict]) -> list[dict]:
    out = []
    for cmd in commands:
        name = next(iter(cmd))
        if name in IGNORED_COMMANDS:
            continue
        cmd = {k: v for k, v in bson.decode(bson.encode(cmd)).items() if k not in CONNECTION_FIELDS}
        if name == "getMore":
            cmd["getMore"] = "<id>"
        if name == "killCursors":
            cmd["cursors"] = ["<id>"]
        out.append(cmd)
    return out


def crud_script(client: Any) -> None:
    coll = client.db.coll
    coll.insert_one({"_id": 1, "a": 1, "t": (1, 2)}, comment="c")
    coll.insert_many([{"_id": i, "a": i % 3, "s": str(i)} for i in range(2, 30)], ordered=False)
    list(coll.find({"a": {"$gte": 1}}, ["a"], skip=1, limit=7, sort=[("a", -1), ("_id", 1)],
                   batch_size=3, max_time_ms=5000, comment={"x": 1}, allow_disk_use=True))
    coll.find_one({"_id": 3})
    coll.find_one(4, {"_id": 0})
    cursor = coll.find().batch_size(2)
    next(cursor)
    cursor.close()
    coll.find().sort("a")[5]
    list(coll.find()[2:6])
    coll.count_documents({"a": 1}, skip=1, limit=10, hint="_id_")
    coll.estimated_document_count()
    coll.distinct("a", {"_id": {"$lt": 10}})
    coll.update_one({"_id": 2}, {"$set": {"arr": [{"x": 1}]}}, upsert=True, hint={"_id": 1})
    coll.update_one({"_id": 2}, {"$inc": {"arr.$[e].x": 1}}, array_filters=[{"e.x": 1}],
                    let={"v": 1}, comment="u")
    coll.update_many({"a": 2}, [{"$set": {"b": "$a"}}])
    coll.replace_one({"_id": 5}, {"r": True}, upsert=True, bypass_document_validation=True)
    coll.delete_one({"_id": 6}, hint="_id_")
    coll.delete_many({"a": 0, "_id": {"$gt": 20}})
    coll.find_one_and_update({"_id": 7}, {"$set": {"f": 1}}, projection={"f": 1},
                             sort=[("_id", 1)], return_document=pymongo.ReturnDocument.AFTER)
    coll.find_one_and_replace({"_id": 8}, {"g": 1}, upsert=True)
    coll.find_one_and_delete({"_id": 9}, sort={"_id": -1})
    coll.bulk_write([InsertOne({"_id": 100}), UpdateOne({"_id": 100}, {"$set": {"k": 1}}),
                     ReplaceOne({"_id": 101}, {"k": 2}, upsert=True), DeleteOne({"_id": 100}),
                     UpdateMany({}, {"$set": {"all": 1}}), DeleteMany({"k": 2})])
    coll.bulk_write([InsertOne({"_id": 102}), DeleteOne({"_id": 102}),
                     UpdateOne({"_id": 103}, {"$set": {"z": 1}}, upsert=True)], ordered=False)
    list(coll.aggregate([{"$match": {"a": 1}}, {"$sort": {"_id": 1}}], batchSize=2,
                        allowDiskUse=False))
    coll.with_options(write_concern=WriteConcern(w=0)).insert_one({"_id": 200})
    coll.with_options(write_concern=WriteConcern(w=1, j=True)).delete_one({"_id": 200})
    coll.find({"a": 1}).explain()


def admin_script(client: Any) -> None:
    db = client.db
    db.create_collection("capped", capped=True, size=4096, max=10)
    db.coll.create_index([("a", 1), ("b", -1)], unique=True, name="ab")
    db.coll.create_indexes([IndexModel("c", sparse=True), IndexModel([("d", "hashed")])])
    list(db.coll.list_indexes())
    db.coll.index_information()
    db.coll.drop_index("ab")
    db.coll.drop_index([("c", 1)])
    db.coll.drop_indexes()
    db.list_collection_names()
    list(db.list_collections(filter={"name": "capped"}))
    db.capped.options()
    db.coll.rename("coll2", dropTarget=True)
    db.command("ping")
    db.command({"count": "coll2", "query": {}})
    db.coll2.drop()
    db.drop_collection("capped")
    client.list_database_names()
    client.server_info()
    client.drop_database("db")


def embedded_commands(script: Callable[[Any], None]) -> list[dict]:
    client = MongoClient()
    seen: list[dict] = []
    channel = client._runner.channel
    original = channel.run

    def record(cmd: dict) -> Any:
        seen.append(cmd)
        return original(cmd)

    channel.run = record  # type: ignore[method-assign]
    try:
        script(client)
    finally:
        client.close()
    return normalised(seen)


def pymongo_commands(script: Callable[[Any], None]) -> list[dict]:
    testing = pytest.importorskip("ginkgodb.server.testing")
    recorder = Recorder()
    with testing.running_server() as (host, port):
        client = pymongo.MongoClient(host, port, event_listeners=[recorder], retryWrites=False,
                                     directConnection=True)
        try:
            script(client)
        finally:
            client.close()
    return normalised(recorder.commands)


@pytest.mark.parametrize("script", [crud_script, admin_script], ids=["crud", "admin"])
def test_embedded_client_sends_what_pymongo_sends(script):
    expected = pymongo_commands(script)
    actual = embedded_commands(script)
    for i, (want, got) in enumerate(zip(expected, actual)):
        assert got == want, f"command #{i} differs"
    assert len(actual) == len(expected)


def _outcome(call: Callable[[], Any]) -> Any:
    """What a caller observes: a result summary, or the exception's type, code and details."""
    try:
        result = call()
    except Exception as exc:  # compared between the two clients
        details = getattr(exc, "details", None)
        if isinstance(details, dict):
            details = {k: v for k, v in details.items() if k not in ("$clusterTime", "operationTime")}
        return (type(exc).__name__, getattr(exc, "code", None), details, str(exc))
    if hasattr(result, "acknowledged"):
        fields = ("inserted_id", "inserted_ids", "matched_count", "modified_count", "upserted_id",
                  "deleted_count", "inserted_count", "upserted_count", "upserted_ids")
        return {f: getattr(result, f) for f in fields if hasattr(result, f)}
    if isinstance(result, (pymongo.cursor.Cursor, pymongo.command_cursor.CommandCursor)) or \
            hasattr(result, "alive"):
        return list(result)
    return result


def outcomes_script(client: Any) -> list:
    coll = client.db.coll
    steps: list[Callable[[], Any]] = [
        lambda: coll.insert_one({"_id": 1, "a": 1}),
        lambda: coll.insert_one({"_id": 1}),
        lambda: coll.insert_many([{"_id": 2}, {"_id": 1}, {"_id": 3}]),
        lambda: coll.insert_many([{"_id": 4}, {"_id": 1}, {"_id": 5}], ordered=False),
        lambda: coll.bulk_write([UpdateOne({"_id": 9}, {"$set": {"u": 1}}, upsert=True),
                                 InsertOne({"_id": 2}), DeleteMany({"_id": {"$gt": 100}})],
                                ordered=False),
        lambda: coll.update_one({"_id": 1}, {"$set": {"_id": 2}}),
        lambda: coll.update_one({"_id": 1}, {"$bogus": {"a": 1}}),
        lambda: coll.update_many({}, {"$inc": {"n": 1}}),
        lambda: coll.replace_one({"_id": 50}, {"x": 1}, upsert=True),
        lambda: coll.delete_many({"_id": {"$gte": 4}}),
        lambda: list(coll.find({"a": {"$bad": 1}})),
        lambda: list(coll.find({}, sort={"a": 2})),
        lambda: coll.find_one_and_update({"_id": 1}, {"$set": {"_id": 3}}),
        lambda: coll.find_one_and_update({"_id": 3}, {"$set": {"q": 1}}, upsert=True,
                                         return_document=pymongo.ReturnDocument.AFTER),
        lambda: coll.count_documents({"n": 1}),
        lambda: coll.distinct("n"),
        lambda: coll.drop_index("nope"),
        lambda: coll.create_index([("a", 1)], name="a"),
        lambda: coll.create_index([("a", -1)], name="a"),
        lambda: client.db.create_collection("coll"),
        lambda: client.db.command("noSuchCommand"),
        lambda: client.db.command({"find": "coll", "filter": {}, "unknownField": 1}),
        lambda: list(coll.aggregate([{"$nope": {}}])),
        lambda: list(coll.aggregate([{"$sort": {"_id": 1}}, {"$project": {"_id": 1}}])),
    ]
    return [_outcome(step) for step in steps]


def test_embedded_client_reports_results_and_errors_as_pymongo_does():
    testing = pytest.importorskip("ginkgodb.server.testing")
    with testing.running_server() as (host, port):
        remote = pymongo.MongoClient(host, port, retryWrites=False, directConnection=True)
        try:
            expected = outcomes_script(remote)
        finally:
            remote.close()
    with MongoClient() as embedded:
        actual = outcomes_script(embedded)
    for i, (want, got) in enumerate(zip(expected, actual)):
        assert got == want, f"step #{i} differs"
    assert len(actual) == len(expected)


def _typed(value: Any) -> Any:
    """A value with the type of every container and scalar spelled out, for exact comparison."""
    if isinstance(value, dict):
        return (type(value).__name__, [(k, _typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [_typed(v) for v in value])
    return (type(value).__name__, repr(value))


def codec_script(client: Any) -> list:
    import datetime
    import uuid

    key = uuid.UUID("0d0c3e51-2b8f-4f39-9a0d-1f2a3b4c5d6e")
    when = datetime.datetime(2024, 2, 3, 4, 5, 6, 789000, tzinfo=datetime.UTC)
    coll = client.db.codec
    coll.insert_one({"_id": key, "when": when, "sub": {"b": 1, "a": [{"x": key}]}})
    return [_typed(v) for v in (
        coll.find_one({"_id": key}),
        coll.find_one_and_update({"_id": key}, {"$set": {"n": 1}},
                                 return_document=pymongo.ReturnDocument.AFTER),
        coll.distinct("sub.a.x"),
        list(coll.aggregate([{"$project": {"when": 1}}])),
        list(coll.list_indexes()),
        client.db.command("ping"),
        client.db.command({"find": "codec", "filter": {}}),
    )]


def test_codec_options_shape_results_as_in_pymongo():
    from bson.son import SON

    options = {"uuidRepresentation": "standard", "tz_aware": True, "document_class": SON}
    testing = pytest.importorskip("ginkgodb.server.testing")
    with testing.running_server() as (host, port):
        remote = pymongo.MongoClient(host, port, directConnection=True, **options)
        try:
            expected = codec_script(remote)
        finally:
            remote.close()
    with MongoClient(**options) as embedded:
        actual = codec_script(embedded)
    for i, (want, got) in enumerate(zip(expected, actual)):
        assert got == want, f"result #{i} differs"
