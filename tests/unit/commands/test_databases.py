"""listDatabases, dropDatabase, dbStats, collStats: replies and their errors."""
from __future__ import annotations

from support.runner import Runner


def test_list_databases_and_drop_database(run):
    run.insert("c", {"a": 1})
    Runner(run.ctx.engine, db="second").insert("c", {})
    admin = Runner(run.ctx.engine, db="admin")
    dbs = admin({"listDatabases": 1})["databases"]
    # `admin` is always listed and `local` holds the oplog, as on mongod
    assert [d["name"] for d in dbs] == ["admin", "local", "second", "test"]
    assert all(d["sizeOnDisk"] > 0 and d["empty"] is False for d in dbs[1:])
    assert admin({"listDatabases": 1, "nameOnly": True})["databases"] == [
        {"name": "admin"}, {"name": "local"}, {"name": "second"}, {"name": "test"}]
    run({"dropDatabase": 1})
    assert [d["name"] for d in admin({"listDatabases": 1})["databases"]] == ["admin", "local", "second"]


def test_list_databases_always_lists_admin_and_local_with_its_oplog(admin):
    assert [(d["name"], d["empty"]) for d in admin({"listDatabases": 1})["databases"]] == [
        ("admin", True), ("local", False)]
    Runner(admin.ctx.engine, db="local").insert("things", {})
    admin.insert("settings", {})
    assert [(d["name"], d["empty"]) for d in admin({"listDatabases": 1})["databases"]] == [
        ("admin", False), ("local", False)]
    assert admin({"listDatabases": 1, "filter": {"name": {"$ne": "admin"}}, "nameOnly": True})["databases"] == [
        {"name": "local"}]


def test_list_databases_filter_and_totals(run, admin):
    run.insert("c", {"a": 1})
    reply = admin({"listDatabases": 1, "filter": {"name": "test"}})
    assert [d["name"] for d in reply["databases"]] == ["test"]
    assert reply["totalSize"] == reply["databases"][0]["sizeOnDisk"] and "totalSizeMb" in reply
    assert admin.error({"listDatabases": 1, "bogus": 1})["code"] == 40415


def test_drop_database_reply(run):
    run.insert("c", {})
    assert run({"dropDatabase": 1}) == {"dropped": "test", "ok": 1.0}
    assert run({"listCollections": 1})["cursor"]["firstBatch"] == []


def test_db_stats_reply_and_scale(run):
    run.insert("c", {"_id": 1}, {"_id": 2})
    reply = run({"dbStats": 1})
    assert (reply["db"], reply["collections"], reply["objects"], reply["scaleFactor"]) == ("test", 1, 2, 1)
    scaled = run({"dbStats": 1, "scale": 1024})
    assert scaled["scaleFactor"] == 1024 and scaled["dataSize"] == reply["dataSize"] / 1024
    err = run.error({"dbStats": 1, "scale": 0})
    assert (err["code"], err["errmsg"]) == (2, "Scale factor must be greater than zero")


def test_coll_stats_reply_and_missing_collection(run):
    run.insert("c", {"_id": 1})
    reply = run({"collStats": "c"})
    assert (reply["ns"], reply["count"], reply["nindexes"], reply["capped"]) == ("test.c", 1, 1, False)
    assert set(reply["indexSizes"]) == {"_id_"}
    err = run.error({"collStats": "nope"})
    assert (err["code"], err["errmsg"]) == (26, "Collection [test.nope] not found.")
