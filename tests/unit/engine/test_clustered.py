"""Clustered collections (records keyed by `_id`, no separate `_id` index), on both engines."""
from __future__ import annotations

import datetime
import uuid

import bson
import pytest
from bson.binary import Binary
from bson.int64 import Int64
from support.runner import Runner

from ginkgodb.engine import layout
from ginkgodb.storage.kv import prefix_end

SPEC = {"key": {"_id": 1}, "unique": True}


@pytest.fixture
def run(engine):
    return Runner(engine)


def clustered(run, name="c", **options):
    return run({"create": name, "clusteredIndex": dict(SPEC), **options})


def stored_ids(engine, name="c"):
    """The `_id`s in storage order of the collection's record keys."""
    coll = engine.collection("test", name)
    with engine.reader() as reader:
        from ginkgodb.engine.record_format import document
        return [bson.decode(document(v))["_id"]
                for _, v in reader.scan(coll.record_prefix, prefix_end(coll.record_prefix))]


def test_records_are_stored_in_id_order_with_no_separate_id_index(run, engine):
    clustered(run)
    run.insert("c", *({"_id": i, "x": i % 3} for i in (5, 3, 9, 1, 7)), {"_id": "s"}, {"_id": -2.5})
    assert stored_ids(engine) == [-2.5, 1, 3, 5, 7, 9, "s"]
    assert [d["_id"] for d in run.find("c")] == [-2.5, 1, 3, 5, 7, 9, "s"]
    coll = engine.collection("test", "c")
    assert [ix.meta.name for ix in coll.indexes] == ["_id_"]
    assert coll.indexes[0].kind == "clustered"
    key = coll.record_key(coll.new_rid({"_id": 5}))
    own = layout.index_prefix(coll.indexes[0].meta.id)
    with engine.reader() as reader:   # the record is keyed by _id; no index entries exist for it
        assert reader.get(key) is not None
        assert reader.first(own, prefix_end(own)) is None


def test_list_collections_and_list_indexes_show_the_clustered_index(run):
    clustered(run, clusteredIndex={**SPEC, "name": "test index"})
    info = run({"listCollections": 1, "filter": {"name": "c"}})["cursor"]["firstBatch"][0]
    assert info["options"] == {"clusteredIndex": {"v": 2, "key": {"_id": 1}, "name": "test index", "unique": True}}
    assert "idIndex" not in info
    indexes = run({"listIndexes": "c"})["cursor"]["firstBatch"]
    assert indexes == [{"v": 2, "key": {"_id": 1}, "name": "test index", "unique": True, "clustered": True}]
    assert run.error({"dropIndexes": "c", "index": "test index"})["code"] == 72


def test_default_name_and_ttl_option_are_listed_as_mongod(run):
    clustered(run, expireAfterSeconds=60)
    info = run({"listCollections": 1, "filter": {"name": "c"}})["cursor"]["firstBatch"][0]
    assert info["options"] == {"clusteredIndex": {"v": 2, "key": {"_id": 1}, "name": "_id_", "unique": True},
                               "expireAfterSeconds": 60}
    indexes = run({"listIndexes": "c"})["cursor"]["firstBatch"]
    assert indexes == [{"v": 2, "key": {"_id": 1}, "name": "_id_", "unique": True, "clustered": True}]


def test_duplicate_id_is_refused_and_nothing_is_written(run):
    clustered(run)
    run.insert("c", {"_id": 1, "a": 1})
    err = run.insert("c", {"_id": 1, "a": 2})["writeErrors"][0]
    assert err["code"] == 11000
    assert err["errmsg"] == "E11000 duplicate key error collection: test.c index: _id_ dup key: { _id: 1 }"
    assert run.insert("c", {"_id": 1.0})["writeErrors"][0]["code"] == 11000   # equal numbers, one key
    assert run.find("c") == [{"_id": 1, "a": 1}]


def test_secondary_indexes_updates_and_deletes(run):
    clustered(run)
    run({"createIndexes": "c", "indexes": [{"key": {"x": 1}, "name": "x_1"},
                                            {"key": {"u": 1}, "name": "u_1", "unique": True, "sparse": True}]})
    run.insert("c", *({"_id": f"k{i:02}", "x": i % 3} for i in range(12)))
    assert [d["_id"] for d in run.find("c", {"x": 1})] == ["k01", "k04", "k07", "k10"]
    run({"update": "c", "updates": [{"q": {"_id": "k04"}, "u": {"$set": {"x": 2, "u": 1}}}]})
    assert [d["_id"] for d in run.find("c", {"x": 1})] == ["k01", "k07", "k10"]
    assert run.insert("c", {"_id": "z", "u": 1})["writeErrors"][0]["code"] == 11000
    run({"delete": "c", "deletes": [{"q": {"x": 2}, "limit": 0}]})
    assert len(run.find("c")) == 7
    assert run.find("c", {"u": 1}) == []
    assert run({"count": "c"})["n"] == 7
    run({"createIndexes": "c", "indexes": [{"key": {"x": -1}, "name": "x_-1"}]})   # a build over records
    assert [d["_id"] for d in run.find("c", {"x": 0}, hint="x_-1")] == ["k00", "k03", "k06", "k09"]


def test_unique_index_build_over_a_clustered_collection_finds_duplicates(run):
    clustered(run)
    run.insert("c", {"_id": 1, "a": 5}, {"_id": 2, "a": 5})
    reply = run.error({"createIndexes": "c", "indexes": [{"key": {"a": 1}, "name": "a_1", "unique": True}]})
    assert reply["code"] == 11000


def test_id_ranges_use_a_clustered_scan_and_sort_by_id_needs_no_sort_stage(run):
    clustered(run)
    run.insert("c", *({"_id": i, "x": i % 2} for i in range(20)))
    plan = run.explain("c", {"_id": {"$gte": 3, "$lt": 6}})
    assert plan["queryPlanner"]["winningPlan"] == {
        "stage": "CLUSTERED_IXSCAN", "filter": {"_id": {"$gte": 3, "$lt": 6}}, "direction": "forward",
        "minRecord": 3, "maxRecord": 6}
    assert plan["executionStats"]["nReturned"] == 3
    assert plan["executionStats"]["totalDocsExamined"] == 3
    point = run.explain("c", {"_id": 7})["queryPlanner"]["winningPlan"]
    assert point["stage"] == "CLUSTERED_IXSCAN" and point["minRecord"] == point["maxRecord"] == 7
    desc = run.explain("c", {}, sort={"_id": -1})["queryPlanner"]["winningPlan"]
    assert desc == {"stage": "COLLSCAN", "direction": "backward"}
    assert [d["_id"] for d in run.find("c", {"x": 1}, sort={"_id": -1}, limit=3)] == [19, 17, 15]
    assert [d["_id"] for d in run.find("c", {"_id": {"$gt": 16}})] == [17, 18, 19]


def test_ttl_expires_records_by_id_date(run, engine):
    from ginkgodb.engine.ttl import expire_once
    clustered(run, expireAfterSeconds=3600)
    now = datetime.datetime(2026, 1, 1, 12, 0)
    run.insert("c", {"_id": now - datetime.timedelta(hours=2)}, {"_id": now - datetime.timedelta(minutes=5)},
               {"_id": "not a date"}, {"_id": now - datetime.timedelta(days=3)})
    assert expire_once(engine, now) == 2
    assert [d["_id"] for d in run.find("c")] == ["not a date", now - datetime.timedelta(minutes=5)]


def test_transactions_write_clustered_collections(run, engine):
    clustered(run)
    run.insert("c", {"_id": 1, "v": 0})
    fields = {"lsid": {"id": Binary(uuid.uuid4().bytes, 4)}, "txnNumber": Int64(1), "autocommit": False}
    run({"insert": "c", "documents": [{"_id": 0}], **fields, "startTransaction": True})
    run({"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$inc": {"v": 1}}}], **fields})
    assert run.find("c") == [{"_id": 1, "v": 0}]
    run({"commitTransaction": 1, **fields, "$db": "admin"})
    assert run.find("c") == [{"_id": 0}, {"_id": 1, "v": 1}]


def test_clustered_collections_survive_reopening(tmp_path):
    from support.engines import make_kv

    from ginkgodb.engine import Engine
    engine = Engine(make_kv("lmdb", tmp_path))
    run = Runner(engine)
    clustered(run)
    run.insert("c", {"_id": "b"}, {"_id": "a"})
    run({"create": "plain"})
    run.insert("plain", {"_id": 2}, {"_id": 1})
    engine.close()
    engine = Engine(make_kv("lmdb", tmp_path))
    run = Runner(engine)
    assert run.find("c") == [{"_id": "a"}, {"_id": "b"}]
    assert run.find("plain") == [{"_id": 2}, {"_id": 1}]   # an ordinary collection keeps insertion order
    run.insert("c", {"_id": "0"})
    assert [d["_id"] for d in run.find("c")] == ["0", "a", "b"]
    engine.close()


@pytest.mark.parametrize("spec, extra, code, message", [
    ({"key": {"_id": 1}}, {}, 40414, "BSON field 'clusteredIndex.unique' is missing but a required field"),
    ({"unique": True}, {}, 40414, "BSON field 'clusteredIndex.key' is missing but a required field"),
    ({**SPEC, "foo": 1}, {}, 40415, "BSON field 'clusteredIndex.foo' is an unknown field."),
    ({"key": {"_id": 1}, "unique": False}, {}, 5979700,
     "The clusteredIndex option requires unique: true to be specified"),
    ({"key": {"a": 1}, "unique": True}, {}, 197, "The clusteredIndex option is only supported for key: {_id: 1}"),
    ({"key": {"_id": -1}, "unique": True}, {}, 197,
     "The clusteredIndex option is only supported for key: {_id: 1}"),
    ({**SPEC, "v": 1}, {}, 5979704,
     "Invalid clusteredIndex specification { v: 1, key: { _id: 1 }, unique: true }; cannot create a "
     "clusteredIndex with v=1"),
    ("yes", {}, 5979702, "'clusteredIndex' has to be a boolean or object."),
    (SPEC, {"size": 1000}, 6049200, "'size' field for capped collections is not allowed on clustered "
                                    "collections. Did you mean 'capped: true' with 'expireAfterSeconds'?"),
    (SPEC, {"max": 10}, 6049204, "'max' field for capped collections is not allowed on clustered "
                                 "collections. Did you mean 'capped: true' with 'expireAfterSeconds'?"),
    (SPEC, {"expireAfterSeconds": -1}, 72, "TTL index 'expireAfterSeconds' option cannot be less than 0"),
])
def test_bad_clustered_specs_get_mongods_errors(run, spec, extra, code, message):
    reply = run.error({"create": "c", "clusteredIndex": spec, **extra})
    assert (reply["code"], reply["errmsg"]) == (code, message)
    assert run({"listCollections": 1})["cursor"]["firstBatch"] == []


def test_expire_after_seconds_needs_clustering(run):
    reply = run.error({"create": "c", "expireAfterSeconds": 10})
    assert (reply["code"], reply["errmsg"]) == (72, "'expireAfterSeconds' requires clustering to be enabled")


def test_coll_mod_changes_and_removes_the_ttl(run, engine):
    from ginkgodb.engine.ttl import expire_once
    clustered(run)
    now = datetime.datetime(2026, 1, 1, 12, 0)
    run.insert("c", {"_id": now - datetime.timedelta(hours=2)}, {"_id": now - datetime.timedelta(minutes=5)})
    assert expire_once(engine, now) == 0
    run({"collMod": "c", "expireAfterSeconds": 3600})
    info = run({"listCollections": 1, "filter": {"name": "c"}})["cursor"]["firstBatch"][0]
    assert info["options"]["expireAfterSeconds"] == 3600
    assert expire_once(engine, now) == 1
    run({"collMod": "c", "expireAfterSeconds": "off"})
    info = run({"listCollections": 1, "filter": {"name": "c"}})["cursor"]["firstBatch"][0]
    assert "expireAfterSeconds" not in info["options"]
    assert expire_once(engine, now + datetime.timedelta(days=1)) == 0
    assert len(run.find("c")) == 1


def test_coll_mod_ttl_errors(run):
    clustered(run)
    run({"create": "plain"})
    err = run.error({"collMod": "plain", "expireAfterSeconds": 10})
    assert (err["code"], err["errmsg"]) == (
        72, "'expireAfterSeconds' option is only supported on collections clustered by _id")
    err = run.error({"collMod": "c", "expireAfterSeconds": "on"})
    assert (err["code"], err["errmsg"]) == (
        72, "Invalid string value for the 'clusteredIndex::expireAfterSeconds' option. Got: 'on'. "
            "Accepted value is 'off'")
    assert run.error({"collMod": "c", "expireAfterSeconds": -5})["code"] == 72


def test_an_id_index_request_is_the_clustered_index_and_it_cannot_be_hidden(run):
    clustered(run, clusteredIndex={**SPEC, "name": "pk"})
    reply = run({"createIndexes": "c", "indexes": [{"key": {"_id": 1}, "name": "_id_"}]})
    assert (reply["numIndexesBefore"], reply["numIndexesAfter"]) == (1, 1)
    err = run.error({"collMod": "c", "index": {"name": "pk", "hidden": True}})
    assert (err["code"], err["errmsg"]) == (2, "can't hide _id index")
    run({"createIndexes": "c", "indexes": [{"key": {"_id": -1}, "name": "id_desc"}]})   # a real secondary
    assert [ix["name"] for ix in run({"listIndexes": "c"})["cursor"]["firstBatch"]] == ["pk", "id_desc"]
