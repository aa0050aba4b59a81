"""Catalog changes on a secondary: every DDL command's oplog entry (create with options, views,
drop, createIndexes, dropIndexes, collMod of options and of an index, renameCollection within
and across databases, dropDatabase) applied to another engine gives the same catalog; and the
made-up entries of an initial sync's clone are applied without being logged."""
from __future__ import annotations

import bson
import pytest
from support.engines import make_kv
from support.runner import Runner

from ginkgodb.engine import Engine
from ginkgodb.repl.initial_sync import _entry, drop_database_entry


def raw_entries(engine) -> list[bytes]:
    return [bson.encode(d) for d in Runner(engine, db="local").find("oplog.rs", {})]


@pytest.fixture
def pair(engine, tmp_path):
    other = Engine(make_kv("memory", tmp_path / "secondary"))
    yield engine, other
    other.close()


def catalog(engine, db: str = "test") -> dict:
    run = Runner(engine, db=db)
    out = {}
    for info in run({"listCollections": 1})["cursor"]["firstBatch"]:
        indexes = ([] if info.get("type") == "view"
                   else run({"listIndexes": info["name"]})["cursor"]["firstBatch"])
        out[info["name"]] = (info.get("type"), info.get("options"), (info.get("info") or {}).get("uuid"),
                             sorted((ix["name"], tuple(sorted(ix.items()))) for ix in indexes))
    return out


def test_every_ddl_command_replicates(pair):
    primary, secondary = pair
    run = Runner(primary)
    run({"create": "capped", "capped": True, "size": 4096, "max": 10})
    run({"create": "valid", "validator": {"a": {"$type": "int"}}})
    run.insert("valid", {"_id": 1, "a": 1})
    run({"create": "v", "viewOn": "valid", "pipeline": [{"$match": {"a": 1}}]})
    run({"createIndexes": "valid", "indexes": [{"key": {"a": 1}, "name": "a_1"},
                                               {"key": {"b": 1}, "name": "b_1", "expireAfterSeconds": 60},
                                               {"key": {"c": 1}, "name": "c_1"}]})
    run({"collMod": "valid", "validator": {"a": {"$type": "number"}}, "validationLevel": "moderate",
         "validationAction": "warn"})
    run({"collMod": "valid", "index": {"name": "a_1", "hidden": True}})
    run({"collMod": "valid", "index": {"keyPattern": {"b": 1}, "expireAfterSeconds": 120}})
    run({"collMod": "valid", "index": {"name": "c_1", "prepareUnique": True}})
    run({"collMod": "valid", "index": {"name": "c_1", "unique": True}})
    run({"collMod": "v", "viewOn": "capped", "pipeline": []})
    run({"create": "clustered", "clusteredIndex": {"key": {"_id": 1}, "unique": True}, "expireAfterSeconds": 30})
    run({"collMod": "clustered", "expireAfterSeconds": 90})
    run({"collMod": "valid", "changeStreamPreAndPostImages": {"enabled": True}})
    run.insert("gone", {"_id": 1})
    run({"dropIndexes": "valid", "index": "b_1"})
    run({"drop": "gone"})
    run.insert("moved", {"_id": 1})
    run({"renameCollection": "test.moved", "to": "test.renamed", "$db": "admin"})
    run.insert("other", {"_id": 1})
    run({"renameCollection": "test.other", "to": "elsewhere.other", "$db": "admin"})
    Runner(primary, db="dropme").insert("x", {"_id": 1})
    Runner(primary, db="dropme")({"dropDatabase": 1})
    secondary.apply_oplog(raw_entries(primary))
    assert catalog(secondary) == catalog(primary)
    assert catalog(secondary, "elsewhere") == catalog(primary, "elsewhere")
    assert "dropme" not in secondary.database_names()
    assert set(catalog(secondary)) == {"capped", "valid", "v", "clustered", "renamed"}
    valid = catalog(secondary)["valid"]
    assert valid[1]["validator"] == {"a": {"$type": "number"}} and valid[1]["validationAction"] == "warn"
    assert valid[1]["changeStreamPreAndPostImages"] == {"enabled": True}
    indexes = {name: dict(items) for name, items in valid[3]}
    assert indexes["a_1"]["hidden"] is True and indexes["c_1"]["unique"] is True and "b_1" not in indexes
    assert catalog(secondary)["v"][1]["viewOn"] == "capped"
    assert catalog(secondary)["clustered"][1]["expireAfterSeconds"] == 90
    assert raw_entries(secondary) == raw_entries(primary)


def test_the_clone_entries_are_applied_without_being_logged(pair):
    _, secondary = pair
    run = Runner(secondary)
    run.insert("old", {"_id": "stale"})
    logged = len(raw_entries(secondary))
    secondary.apply_oplog([drop_database_entry("test")], logged=False)
    uuid = bson.Binary(b"\x01" * 16, 4)
    secondary.apply_oplog([_entry("c", "test.$cmd", {"create": "c", "capped": True, "size": 4096}, uuid),
                           _entry("c", "test.$cmd", {"createIndexes": "c", "v": 2, "key": {"a": 1}, "name": "a_1"},
                                  uuid),
                           _entry("i", "test.c", {"_id": 1, "a": 1}, uuid)], logged=False)
    assert run.find("c", {}) == [{"_id": 1, "a": 1}] and run.find("old", {}) == []
    assert secondary.catalog.get("test", "c").uuid == uuid
    assert len(raw_entries(secondary)) == logged


class _FakeDatabase:
    def __init__(self, infos: list) -> None:
        self.infos = infos

    def list_collections(self, filter=None):
        return [i for i in self.infos if not filter or i["name"] == filter["name"]]


def test_the_clone_lists_collections_then_time_series_then_views():
    from ginkgodb.repl.initial_sync import collection_infos
    plain = {"test": _FakeDatabase([{"name": "v", "type": "view"}, {"name": "m", "type": "timeseries"},
                                    {"name": "system.buckets.m", "type": "collection"},
                                    {"name": "c", "type": "collection"}])}
    assert [i["name"] for i in collection_infos(plain, "test")] == ["system.buckets.m", "c", "m", "v"]
    assert [i["name"] for i in collection_infos(plain, "test", "v")] == ["v"]


def test_the_clone_copies_a_time_series_collection_as_its_buckets_and_its_view(engine, tmp_path):
    """mongod's initial sync copies `system.buckets.<name>` (options, UUID, indexes, buckets) and
    the view on it: the copy answers queries, listCollections and listIndexes as the source."""
    import datetime

    from ginkgodb import MongoClient
    from ginkgodb.repl.initial_sync import CloneProgress, clone
    source = MongoClient()
    try:
        db = source.get_database("test")
        db.create_collection("weather", timeseries={"timeField": "at", "metaField": "station",
                                                    "granularity": "minutes"}, expireAfterSeconds=86400 * 400)
        db.weather.create_index([("at", -1)], name="latest")
        base = datetime.datetime.now(datetime.UTC).replace(tzinfo=None, microsecond=0)
        db.weather.insert_many([{"at": base - datetime.timedelta(minutes=i), "station": i % 3, "temp": i}
                                for i in range(50)])
        db.create_collection("warm", viewOn="weather", pipeline=[{"$match": {"temp": {"$gte": 40}}}])
        clone(engine, source, CloneProgress(), lambda: False)
        assert catalog(engine) == catalog_of(source)
        run = Runner(engine)
        copied = run.find("weather", sort={"temp": 1}, projection={"_id": 0})
        assert copied == list(db.weather.find({}, {"_id": 0}, sort=[("temp", 1)]))
        assert len(copied) == 50 and run({"count": "warm"})["n"] == 10
        assert (sorted(ix["name"] for ix in run({"listIndexes": "weather"})["cursor"]["firstBatch"])
                == sorted(ix["name"] for ix in db.weather.list_indexes()) == ["latest", "station_1_at_1"])
        assert run({"aggregate": "weather", "pipeline": [{"$match": {"station": 1}}, {"$count": "n"}],
                    "cursor": {}})["cursor"]["firstBatch"] == [{"n": 17}]
        run.insert("weather", {"at": base, "station": 9, "temp": 99})     # and it takes new measurements
        assert run({"count": "weather"})["n"] == 51
    finally:
        source.close()


def catalog_of(client) -> dict:
    """catalog() of the embedded client's database `test`."""
    db = client.get_database("test")
    out = {}
    for info in db.list_collections():
        indexes = [] if info.get("type") == "view" else list(db[info["name"]].list_indexes())
        out[info["name"]] = (info.get("type"), info.get("options"), (info.get("info") or {}).get("uuid"),
                             sorted((ix["name"], tuple(sorted(dict(ix).items()))) for ix in indexes))
    return out


def test_a_time_series_collection_replicates(pair):
    """The primary logs the buckets collection's create (a system namespace), the view, the
    bucket index and the buckets: a secondary applies them all (before, the buckets' create
    stopped replication with InvalidNamespace)."""
    import datetime
    primary, secondary = pair
    run = Runner(primary)
    run({"create": "m", "timeseries": {"timeField": "t", "metaField": "k"}})
    base = datetime.datetime(2026, 1, 1)
    run.insert("m", *({"t": base + datetime.timedelta(seconds=i), "k": i % 2, "v": i} for i in range(20)))
    secondary.apply_oplog(raw_entries(primary))
    assert catalog(secondary) == catalog(primary)
    other = Runner(secondary)
    assert (other.find("m", sort={"v": 1}, projection={"_id": 0})
            == run.find("m", sort={"v": 1}, projection={"_id": 0}))
