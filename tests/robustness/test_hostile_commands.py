"""Hostile and careless commands over the wire: each gets mongod's code and writes nothing.

A table, so that every hole found stays found: the case, the database it runs against, the
command, and the code mongod answers (at the top level, or as the first write error). After
each one the whole database state (collections, options, indexes, documents) must be as before.
"""
from __future__ import annotations

from typing import Any, Optional

import pymongo
import pytest
from bson.raw_bson import RawBSONDocument
from pymongo.errors import OperationFailure

from ginkgodb.server.testing import running_server


def nested(levels: int) -> dict:
    """A document with `levels` objects nested under its top level."""
    doc: dict = {"v": 1}
    for _ in range(levels):
        doc = {"a": doc}
    return doc


# (case, database, command, expected code, "command" | "write")
HOSTILE: list[tuple[str, str, dict, Optional[int], str]] = [
    ("maxTimeMS of the wrong type", "test", {"find": "base", "maxTimeMS": "x"}, 14, "command"),
    ("negative maxTimeMS", "test", {"insert": "base", "documents": [{"_id": 9}], "maxTimeMS": -1}, 2, "command"),
    ("unknown query operator", "test", {"find": "base", "filter": {"a": {"$bogus": 1}}}, 2, "command"),
    ("getMore of no cursor", "test", {"getMore": 12345, "collection": "base"}, 43, "command"),
    ("autocommit true", "test", {"insert": "base", "documents": [{"_id": 9}], "txnNumber": 1, "autocommit": True},
     72, "command"),
    ("snapshot read concern", "test", {"find": "base", "readConcern": {"level": "snapshot"}}, 123, "command"),
    ("unknown command", "test", {"noSuchCommand": 1}, 59, "command"),
    ("bad sort direction on an indexed field", "test", {"find": "base", "sort": {"a": 2}}, 15975, "command"),
    ("delete limit other than 0/1", "test", {"delete": "base", "deletes": [{"q": {}, "limit": 5}]}, 9, "write"),
    ("create a system collection", "test", {"create": "system.foo"}, 73, "command"),
    ("array _id", "test", {"insert": "base", "documents": [{"_id": [1]}]}, 53, "write"),
    ("invalid regex", "test", {"find": "base", "filter": {"s": {"$regex": "("}}}, 51091, "command"),
    ("$group without _id", "test", {"aggregate": "base", "pipeline": [{"$group": {}}], "cursor": {}}, 15955,
     "command"),
    ("bad sort direction", "test", {"find": "base", "sort": {"s": 2}}, 15975, "command"),
    ("ordered of the wrong type", "test", {"insert": "base", "documents": [{"_id": 9}], "ordered": "x"}, 14,
     "command"),
    ("index without a name", "test", {"createIndexes": "base", "indexes": [{"key": {"a": 1}}]}, 9, "command"),
    # direct writes into the catalog's collections
    ("insert into system.views", "test",
     {"insert": "system.views", "documents": [{"_id": "test.x", "viewOn": "base", "pipeline": []}]}, 73, "command"),
    ("update system.views", "test",
     {"update": "system.views", "updates": [{"q": {}, "u": {"$set": {"viewOn": "x"}}, "upsert": True}]}, 73,
     "command"),
    ("delete from system.profile", "test", {"delete": "system.profile", "deletes": [{"q": {}, "limit": 0}]}, 73,
     "command"),
    ("findAndModify system.views", "test",
     {"findAndModify": "system.views", "query": {}, "update": {"$set": {"x": 1}}, "upsert": True}, 73, "command"),
    # $out / $merge into places they may not write
    ("$out into a system collection", "test",
     {"aggregate": "base", "pipeline": [{"$out": "system.js"}], "cursor": {}}, 17385, "command"),
    ("$out into an internal database", "test",
     {"aggregate": "base", "pipeline": [{"$out": {"db": "admin", "coll": "x"}}], "cursor": {}}, 31321, "command"),
    ("$merge into a system collection", "test",
     {"aggregate": "base", "pipeline": [{"$merge": {"into": "system.views"}}], "cursor": {}}, 31319, "command"),
    ("$merge into an internal database", "test",
     {"aggregate": "base", "pipeline": [{"$merge": {"into": {"db": "local", "coll": "x"}}}], "cursor": {}},
     31320, "command"),
    # view graphs
    ("view closing a cycle", "test", {"create": "view_b", "viewOn": "view_a", "pipeline": []}, 5, "command"),
    ("view on itself", "test", {"create": "selfish", "viewOn": "selfish", "pipeline": []}, 5, "command"),
    ("view cycle through $lookup", "test",
     {"create": "view_b", "viewOn": "base",
      "pipeline": [{"$lookup": {"from": "view_a", "localField": "a", "foreignField": "a", "as": "j"}}]},
     5, "command"),
    ("collMod closing a cycle", "test", {"collMod": "view_a", "viewOn": "view_a"}, 5, "command"),
    ("collMod viewOn of a collection", "test", {"collMod": "base", "viewOn": "x"}, 72, "command"),
    # nesting depth
    ("insert nested 101 levels", "test", {"insert": "base", "documents": [nested(100)]}, 15, "write"),
    ("update to 101 levels", "test",
     {"update": "base", "updates": [{"q": {"_id": 1}, "u": {"$set": {"deep": nested(99)}}}]}, 15, "write"),
    ("upsert of 101 levels", "test",
     {"update": "base", "updates": [{"q": {"_id": 77}, "u": {"$set": {"deep": nested(99)}}, "upsert": True}]},
     15, "write"),
    # administration
    ("fsync outside admin", "test", {"fsync": 1}, 13, "command"),
    ("shutdown outside admin", "test", {"shutdown": 1}, 13, "command"),
    ("renameCollection outside admin", "test", {"renameCollection": "test.base", "to": "test.other"}, 13,
     "command"),
    ("fsyncUnlock when not locked", "admin", {"fsyncUnlock": 1}, None, "command"),
    ("fsyncLock is a shell helper", "admin", {"fsyncLock": 1}, 59, "command"),
    ("fsync with an unknown field", "admin", {"fsync": 1, "lock": True, "bogus": 1}, 40415, "command"),
]


@pytest.fixture(scope="module")
def client():
    with running_server(quiet=True) as address:
        c = pymongo.MongoClient(*address, serverSelectionTimeoutMS=5000)
        db = c.test
        db.base.insert_many([{"_id": i, "a": i % 3, "s": "x" * i} for i in range(1, 6)])
        db.base.create_index("a")
        db.create_collection("view_a", viewOn="view_b", pipeline=[])  # view_b is not there (yet)
        yield c
        c.close()


def everything(client: pymongo.MongoClient) -> dict[str, Any]:
    """The whole visible state: every collection's options, indexes and stored bytes."""
    state: dict[str, Any] = {}
    for name in client.list_database_names():
        db = client[name]
        for info in db.list_collections():
            key = f"{name}.{info['name']}"
            state[key] = {"options": info.get("options"), "type": info.get("type")}
            if info.get("type") == "collection":
                state[key]["indexes"] = sorted(str(ix) for ix in db[info["name"]].list_indexes())
                raw = db.get_collection(info["name"], codec_options=db.codec_options.with_options(
                    document_class=RawBSONDocument))
                state[key]["documents"] = [d.raw for d in raw.find().sort("$natural", 1)]
    return state


#: holes found and not yet closed (in layers outside this suite's branch): they fail as expected
#: until fixed, then the strict xfail fails and the case moves into HOSTILE
KNOWN_HOLES: list = []


@pytest.mark.parametrize("case,db,command,code,where", [*HOSTILE, *KNOWN_HOLES],
                         ids=[c[0] for c in HOSTILE] + [hole.id for hole in KNOWN_HOLES])
def test_hostile_command_gets_mongods_code_and_writes_nothing(client, case, db, command, code, where):
    before = everything(client)
    try:
        reply = client[db].command(command)
    except OperationFailure as exc:
        reply = exc.details
    if where == "write":
        assert reply.get("ok") == 1.0, reply
        errors = reply.get("writeErrors") or []
        assert errors and errors[0]["code"] == code, reply
        assert reply.get("n", 0) == 0 and reply.get("nModified", 0) == 0
    else:
        assert reply.get("ok") == 0.0, reply
        assert reply.get("code") == code, reply
        if code is None:
            assert "codeName" not in reply  # mongod's legacy errmsg-only failure
    assert everything(client) == before, f"{case} changed the database"
    assert client.admin.command("ping")["ok"] == 1.0
