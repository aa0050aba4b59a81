"""create, drop, listCollections, renameCollection, collMod: options, errors and replies."""
from __future__ import annotations

import pytest
from support.runner import Runner


def test_create_list_and_drop_collections(run):
    run({"create": "a"})
    run({"create": "b", "capped": True, "size": 4096})
    assert run.error({"create": "a"})["code"] == 48
    names = run({"listCollections": 1, "nameOnly": True})["cursor"]["firstBatch"]
    assert names == [{"name": "a", "type": "collection"}, {"name": "b", "type": "collection"}]
    infos = run({"listCollections": 1, "filter": {"name": "b"}})["cursor"]["firstBatch"]
    assert infos[0]["options"] == {"capped": True, "size": 4096}
    assert infos[0]["idIndex"] == {"v": 2, "key": {"_id": 1}, "name": "_id_"}
    assert run({"drop": "a"})["nIndexesWas"] == 1
    assert run({"drop": "missing"})["ok"] == 1.0


def test_capped_needs_a_size(run):
    err = run.error({"create": "c", "capped": True})
    assert err["code"] == 72


@pytest.mark.parametrize("options,code,message", [
    ({"capped": True, "size": -1}, 2, "size must be a positive number"),
    ({"validationLevel": "bogus"}, 2, "Enumeration value 'bogus' for field 'validationLevel' is not a valid value."),
    ({"validationAction": "bogus"}, 2, "Enumeration value 'bogus' for field 'validationAction' is not a valid value."),
    ({"pipeline": []}, 2, "'pipeline' requires 'viewOn' to also be specified"),
    ({"bogus": 1}, 40415, "BSON field 'create.bogus' is an unknown field."),
])
def test_create_refuses_bad_options(run, options, code, message):
    err = run.error({"create": "v", **options})
    assert (err["code"], err["errmsg"]) == (code, message)
    assert run({"listCollections": 1})["cursor"]["firstBatch"] == []


def test_create_with_an_unsupported_option_is_not_implemented(run):
    err = run.error({"create": "t", "encryptedFields": {"fields": []}})
    assert (err["code"], err["codeName"]) == (238, "NotImplemented")


def test_create_view_is_listed_as_a_view(run):
    run({"create": "c"})
    run({"create": "v", "viewOn": "c", "pipeline": [{"$match": {"a": 1}}]})
    [info] = run({"listCollections": 1, "filter": {"type": "view"}})["cursor"]["firstBatch"]
    assert info == {"name": "v", "type": "view", "options": {"viewOn": "c", "pipeline": [{"$match": {"a": 1}}]},
                    "info": {"readOnly": True}}


def test_drop_reply_names_the_namespace(run):
    run({"createIndexes": "c", "indexes": [{"key": {"a": 1}, "name": "a_1"}]})
    assert run({"drop": "c"}) == {"nIndexesWas": 2, "ns": "test.c", "ok": 1.0}


def test_list_collections_parameters(run):
    err = run.error({"listCollections": 1, "filter": 3})
    assert (err["code"], err["errmsg"]) == (14, "BSON field 'listCollections.filter' is the wrong type 'int', "
                                                "expected type 'object'")
    assert run.error({"listCollections": 1, "bogus": 1})["code"] == 40415


def test_list_collections_cursor_namespace(run):
    assert run({"listCollections": 1})["cursor"] == {"firstBatch": [], "id": 0, "ns": "test.$cmd.listCollections"}


def test_rename_collection_keeps_documents_and_indexes(run):
    run.insert("a", {"_id": 1, "k": 2})
    run({"createIndexes": "a", "indexes": [{"key": {"k": 1}, "name": "k_1"}]})
    admin = Runner(run.ctx.engine, db="admin")
    admin({"renameCollection": "test.a", "to": "other.b"})
    assert run.find("a") == []
    other = Runner(run.ctx.engine, db="other")
    assert other.find("b", {"k": 2}) == [{"_id": 1, "k": 2}]
    assert other.explain("b", {"k": 2})["queryPlanner"]["winningPlan"]["inputStage"]["indexName"] == "k_1"
    assert admin.error({"renameCollection": "test.zz", "to": "test.y"})["code"] == 26
    run.insert("x", {})
    other.insert("y", {})
    assert admin.error({"renameCollection": "test.x", "to": "other.y"})["code"] == 48
    admin({"renameCollection": "test.x", "to": "other.y", "dropTarget": True})


def test_rename_collection_errors(run, admin):
    run.insert("a", {})
    err = run.error({"renameCollection": "test.a", "to": "test.b"})
    assert (err["code"], err["errmsg"]) == (13, "renameCollection may only be run against the admin database.")
    err = admin.error({"renameCollection": "test.a", "to": "test.a"})
    assert (err["code"], err["errmsg"]) == (20, "Can't rename a collection to itself")
    assert admin.error({"renameCollection": "test.a", "to": "test.b", "bogus": 1})["code"] == 40415
    assert len(run.find("a")) == 1 and run.find("b") == []


def test_coll_mod_hides_an_index_and_reports_old_and_new(run):
    run({"createIndexes": "c", "indexes": [{"key": {"a": 1}, "name": "a_1"}]})
    assert run({"collMod": "c", "index": {"name": "a_1", "hidden": True}}) == {
        "hidden_old": False, "hidden_new": True, "ok": 1.0}
    [_, spec] = run({"listIndexes": "c"})["cursor"]["firstBatch"]
    assert spec["hidden"] is True
    assert run({"collMod": "c", "index": {"keyPattern": {"a": 1}, "hidden": False}})["hidden_old"] is True


def test_coll_mod_sets_a_validator(run):
    run({"create": "c"})
    run({"collMod": "c", "validator": {"a": {"$type": "int"}}, "validationLevel": "strict"})
    [info] = run({"listCollections": 1})["cursor"]["firstBatch"]
    assert info["options"] == {"validator": {"a": {"$type": "int"}}, "validationLevel": "strict"}
    assert run.insert("c", {"a": "x"})["writeErrors"][0]["code"] == 121


def test_coll_mod_errors(run):
    err = run.error({"collMod": "nope"})
    assert (err["code"], err["errmsg"]) == (26, "ns does not exist: test.nope")
    run({"create": "c"})
    err = run.error({"collMod": "c", "index": {"name": "zz", "hidden": True}})
    assert (err["code"], err["errmsg"]) == (27, "cannot find index zz for ns test.c")
    assert run.error({"collMod": "c", "bogus": 1})["code"] == 40415


def test_compact_checks_the_namespace_and_frees_nothing_lmdb_reuses(run):
    run.insert("c", {"x": 1})
    assert run({"compact": "c"})["bytesFreed"] == 0
    assert run({"compact": "c", "force": True})["ok"] == 1.0
    assert run.error({"compact": "missing"})["code"] == 26
    run({"create": "v", "viewOn": "c", "pipeline": []})
    assert run.error({"compact": "v"})["code"] == 166
    assert run.error({"compact": "c", "bogus": 1})["code"] == 40415
    assert run.find("c") == [{"_id": run.find("c")[0]["_id"], "x": 1}]
