"""createIndexes, listIndexes, dropIndexes: parameters, replies and conflicts."""
from __future__ import annotations

import pytest


def create(run, coll, key, name=None, **options):
    return run.raw({"createIndexes": coll, "indexes": [{"key": key, "name": name or "_".join(
        f"{k}_{v}" for k, v in key.items()), **options}]})


def test_create_indexes_reply(run):
    assert create(run, "c", {"a": 1}) == {"numIndexesBefore": 1, "numIndexesAfter": 2,
                                          "createdCollectionAutomatically": True, "ok": 1.0}
    assert create(run, "c", {"b": 1})["createdCollectionAutomatically"] is False


def test_index_spec_conflicts(run):
    create(run, "c", {"a": 1})
    assert create(run, "c", {"a": 1})["note"] == "all indexes already exist"
    assert create(run, "c", {"a": 1}, name="other")["code"] == 85
    assert create(run, "c", {"b": 1}, name="a_1")["code"] == 86


@pytest.mark.parametrize("spec,code,message", [
    ({"key": {"a": 1}}, 9, "The 'name' field is a required property of an index specification"),
    ({"name": "x"}, 9, "The 'key' field is a required property of an index specification"),
])
def test_index_specs_need_a_key_and_a_name(run, spec, code, message):
    err = run.error({"createIndexes": "c", "indexes": [spec]})
    assert (err["code"], err["errmsg"]) == (code, message)


def test_create_indexes_parameters(run):
    err = run.error({"createIndexes": "c"})
    assert (err["code"], err["errmsg"]) == (40414, "BSON field 'createIndexes.indexes' is missing but a required field")
    err = run.error({"createIndexes": "c", "indexes": []})
    assert (err["code"], err["errmsg"]) == (2, "Must specify at least one index to create")
    assert run.error({"createIndexes": "c", "indexes": [], "bogus": 1})["code"] == 40415


def test_list_indexes_reply_is_a_cursor_of_specs(run):
    create(run, "c", {"a": 1}, unique=True)
    reply = run({"listIndexes": "c"})
    assert reply["cursor"] == {"id": 0, "ns": "test.c", "firstBatch": [
        {"v": 2, "key": {"_id": 1}, "name": "_id_"}, {"v": 2, "key": {"a": 1}, "name": "a_1", "unique": True}]}


def test_list_indexes_of_a_missing_collection(run):
    err = run.error({"listIndexes": "nope"})
    assert (err["code"], err["errmsg"]) == (26, "ns does not exist: test.nope")


def test_drop_indexes(run):
    create(run, "c", {"a": 1})
    create(run, "c", {"b": 1})
    assert run({"dropIndexes": "c", "index": {"a": 1}})["nIndexesWas"] == 3
    assert run.error({"dropIndexes": "c", "index": "zz"})["code"] == 27
    assert run.error({"dropIndexes": "c", "index": "_id_"})["code"] == 72
    run({"dropIndexes": "c", "index": "*"})
    assert [ix["name"] for ix in run({"listIndexes": "c"})["cursor"]["firstBatch"]] == ["_id_"]


def test_drop_indexes_parameters(run):
    err = run.error({"dropIndexes": "c"})
    assert (err["code"], err["errmsg"]) == (40414, "BSON field 'dropIndexes.index' is missing but a required field")
    err = run.error({"dropIndexes": "nope", "index": "*"})
    assert (err["code"], err["errmsg"]) == (26, "ns not found test.nope")


@pytest.mark.parametrize("options,field", [({"unique": True}, "unique"), ({"sparse": True}, "sparse"),
                                           ({"expireAfterSeconds": 5}, "expireAfterSeconds")])
def test_an_id_index_spec_holds_key_name_and_collation_only(run, options, field):
    run.insert("c", {"_id": 1})
    err = run.error({"createIndexes": "c", "indexes": [{"key": {"_id": 1}, "name": "_id_1", **options}]})
    assert (err["code"], err["codeName"]) == (197, "InvalidIndexSpecificationOption")
    assert err["errmsg"].startswith(f"The field '{field}' is not valid for an _id index specification. "
                                    "Specification: { key: { _id: 1 }, name: \"_id_1\", ")


def test_an_id_index_under_another_name_is_the_id_index(run):
    run.insert("c", {"_id": 1})
    reply = run({"createIndexes": "c", "indexes": [{"key": {"_id": 1}, "name": "_id_1"}]})
    assert reply == {"numIndexesBefore": 1, "numIndexesAfter": 1, "createdCollectionAutomatically": False,
                     "note": "all indexes already exist", "ok": 1.0}
    assert [ix["name"] for ix in run({"listIndexes": "c"})["cursor"]["firstBatch"]] == ["_id_"]


def test_the_name_of_the_id_index_is_reserved(run):
    err = run.error({"createIndexes": "c", "indexes": [{"key": {"a": 1}, "name": "_id_"}]})
    assert (err["code"], err["errmsg"]) == (2, "The index name '_id_' is reserved for the _id index, which must "
                                               "have key pattern {_id: 1}, found { a: 1 }")
