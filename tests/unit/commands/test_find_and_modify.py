"""findAndModify: the update/remove/new/upsert combinations mongod refuses, and the reply."""
from __future__ import annotations

import pytest


def test_find_and_modify_returns_old_or_new_document(run):
    run.insert("c", {"_id": 1, "n": 1})
    old = run({"findAndModify": "c", "query": {"_id": 1}, "update": {"$inc": {"n": 1}}})
    assert old["value"] == {"_id": 1, "n": 1} and old["lastErrorObject"] == {"n": 1, "updatedExisting": True}
    new = run({"findAndModify": "c", "query": {"_id": 1}, "update": {"$inc": {"n": 1}}, "new": True,
               "fields": {"_id": 0}})
    assert new["value"] == {"n": 3}
    removed = run({"findAndModify": "c", "query": {"_id": 1}, "remove": True})
    assert removed["value"]["n"] == 3 and run.find("c") == []
    up = run({"findAndModify": "c", "query": {"_id": 9}, "update": {"$set": {"a": 1}}, "upsert": True, "new": True})
    assert up["value"] == {"_id": 9, "a": 1} and up["lastErrorObject"]["upserted"] == 9


def test_reply_of_a_match_nothing_is_a_null_value(run):
    reply = run({"findAndModify": "c", "query": {"_id": 1}, "update": {"$set": {"a": 1}}})
    assert reply == {"lastErrorObject": {"n": 0, "updatedExisting": False}, "value": None, "ok": 1.0}


def test_lowercase_alias(run):
    run.insert("c", {"_id": 1})
    assert run({"findandmodify": "c", "query": {}, "remove": True})["value"] == {"_id": 1}


@pytest.mark.parametrize("extra,message", [
    ({}, "Either an update or remove=true must be specified"),
    ({"remove": True, "update": {"$set": {"a": 1}}}, "Cannot specify both an update and remove=true"),
    ({"remove": True, "new": True},
     "Cannot specify both new=true and remove=true; 'remove' always returns the deleted document"),
    ({"update": 5}, "Update argument must be either an object or an array"),
])
def test_refused_combinations_are_failed_to_parse(run, extra, message):
    run.insert("c", {"_id": 1})
    err = run.error({"findAndModify": "c", "query": {"_id": 1}, **extra})
    assert (err["code"], err["codeName"], err["errmsg"]) == (9, "FailedToParse", message)
    assert run.find("c") == [{"_id": 1}]


def test_parameters_of_the_wrong_type_or_unknown(run):
    err = run.error({"findAndModify": "c", "query": 1, "remove": True})
    assert (err["code"], err["errmsg"]) == (14, "BSON field 'findAndModify.query' is the wrong type 'int', "
                                                "expected type 'object'")
    err = run.error({"findAndModify": "c", "remove": True, "bogus": 1})
    assert (err["code"], err["errmsg"]) == (40415, "BSON field 'findAndModify.bogus' is an unknown field.")
