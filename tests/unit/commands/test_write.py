"""insert, update, delete: required fields, statement parsing, write concerns and reply shapes."""
from __future__ import annotations

import pytest


def test_insert_reply_counts_documents(run):
    assert run({"insert": "c", "documents": [{"_id": 1}, {"_id": 2}]}) == {"n": 2, "ok": 1.0}


def test_update_reply_counts_matches_modifications_and_upserts(run):
    run.insert("c", {"_id": 1, "a": 1}, {"_id": 2, "a": 1})
    reply = run({"update": "c", "updates": [
        {"q": {"a": 1}, "u": {"$set": {"b": 1}}, "multi": True},
        {"q": {"_id": 9}, "u": {"$set": {"b": 2}}, "upsert": True}]})
    assert reply == {"n": 3, "nModified": 2, "upserted": [{"index": 1, "_id": 9}], "ok": 1.0}


def test_delete_reply_counts_and_limit_one_deletes_one(run):
    run.insert("c", {"_id": 1, "a": 1}, {"_id": 2, "a": 1})
    assert run({"delete": "c", "deletes": [{"q": {"a": 1}, "limit": 1}]}) == {"n": 1, "ok": 1.0}
    assert run({"delete": "c", "deletes": [{"q": {}, "limit": 0}]}) == {"n": 1, "ok": 1.0}


def test_write_errors_are_reported_inside_an_ok_reply(run):
    run.insert("c", {"_id": 1})
    reply = run({"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$set": {"_id": 2}}}]})
    assert reply["ok"] == 1.0 and reply["n"] == 0 and reply["nModified"] == 0
    assert reply["writeErrors"] == [{"index": 0, "code": 66, "errmsg": "Performing an update on the path '_id' "
                                                                      "would modify the immutable field '_id'"}]


@pytest.mark.parametrize("cmd,field", [
    ({"insert": "c"}, "insert.documents"),
    ({"update": "c"}, "update.updates"),
    ({"delete": "c"}, "delete.deletes"),
    ({"update": "c", "updates": [{"u": {}}]}, "update.updates.q"),
    ({"update": "c", "updates": [{"q": {}}]}, "update.updates.u"),
    ({"delete": "c", "deletes": [{"limit": 0}]}, "delete.deletes.q"),
    ({"delete": "c", "deletes": [{"q": {}}]}, "delete.deletes.limit"),
])
def test_missing_required_fields_are_40414(run, cmd, field):
    err = run.error(cmd)
    assert (err["code"], err["codeName"]) == (40414, "IDLFailedToParse")
    assert err["errmsg"] == f"BSON field '{field}' is missing but a required field"


@pytest.mark.parametrize("cmd,field", [
    ({"insert": "c", "documents": [{}], "bogus": 1}, "insert.bogus"),
    ({"update": "c", "updates": [{"q": {}, "u": {}, "bogus": 1}]}, "update.updates.bogus"),
    ({"update": "c", "updates": [{"q": {}, "u": {}, "sort": {"a": 1}}]}, "update.updates.sort"),
    ({"delete": "c", "deletes": [{"q": {}, "limit": 0, "bogus": 1}]}, "delete.deletes.bogus"),
])
def test_unknown_fields_are_40415(run, cmd, field):
    err = run.error(cmd)
    assert (err["code"], err["errmsg"]) == (40415, f"BSON field '{field}' is an unknown field.")


def test_statement_fields_of_the_wrong_type(run):
    err = run.error({"insert": "c", "documents": [{}], "ordered": "x"})
    assert (err["code"], err["errmsg"]) == (14, "BSON field 'insert.ordered' is the wrong type 'string', "
                                                "expected type 'bool'")
    err = run.error({"delete": "c", "deletes": [{"q": 1, "limit": 0}]})
    assert (err["code"], err["errmsg"]) == (14, "BSON field 'delete.deletes.q' is the wrong type 'int', "
                                                "expected type 'object'")
    err = run.error({"update": "c", "updates": [{"q": {}, "u": 1}]})
    assert (err["code"], err["errmsg"]) == (9, "Update argument must be either an object or an array")


@pytest.mark.parametrize("cmd,field,actual", [
    ({"insert": "c", "documents": {}}, "insert.documents", "object"),
    ({"update": "c", "updates": 1}, "update.updates", "int"),
    ({"delete": "c", "deletes": "x"}, "delete.deletes", "string"),
])
def test_statement_lists_of_the_wrong_type_name_it(run, cmd, field, actual):
    err = run.error(cmd)
    assert (err["code"], err["errmsg"]) == (14, f"BSON field '{field}' is the wrong type '{actual}', "
                                                "expected type 'array'")


def test_an_inserted_non_document_names_its_type(run):
    err = run.error({"insert": "c", "documents": [1]})
    assert (err["code"], err["errmsg"]) == (14, "BSON field 'insert.documents.0' is the wrong type 'int', "
                                                "expected type 'object'")


@pytest.mark.parametrize("cmd", [{"insert": "c", "documents": []}, {"delete": "c", "deletes": []}])
def test_empty_batches_are_invalid_length(run, cmd):
    err = run.error(cmd)
    assert (err["code"], err["codeName"]) == (16, "InvalidLength")
    assert err["errmsg"] == "Write batch sizes must be between 1 and 100000. Got 0 operations."


def test_write_concerns_a_standalone_refuses(run):
    err = run.error({"insert": "c", "documents": [{}], "writeConcern": {"w": "nope"}})
    assert (err["code"], err["errmsg"]) == (79, "Cannot satisfy write concern: unrecognized write concern mode 'nope'")
    err = run.error({"insert": "c", "documents": [{}], "writeConcern": {"w": 2}})
    assert (err["code"], err["errmsg"]) == (2, "cannot use 'w' > 1 on a standalone")
    assert run({"insert": "c", "documents": [{}], "writeConcern": {"w": "majority", "j": True}})["n"] == 1


def test_a_refused_write_changes_nothing(run):
    run.error({"insert": "c", "documents": [{"_id": 1}], "bogus": 1})
    run.error({"update": "c", "updates": [{"q": {}, "u": {"$set": {"a": 1}}}, {"q": {}}]})
    assert run({"find": "c"})["cursor"]["firstBatch"] == []


def test_a_pipeline_update_is_not_evaluated_when_no_document_matched(run):
    run.insert("c", {"_id": 1, "a": 1})
    failing = [{"$set": {"x": {"$divide": [1, 0]}}}]
    assert run({"update": "c", "updates": [{"q": {"_id": 5}, "u": failing}]}) == {"n": 0, "nModified": 0, "ok": 1.0}
    reply = run({"update": "c", "updates": [{"q": {"_id": 1}, "u": failing}]})
    assert reply["writeErrors"][0]["code"] == 2 and reply["writeErrors"][0]["errmsg"] == "can't $divide by zero"
    reply = run({"update": "c", "updates": [{"q": {"_id": 5}, "u": failing, "upsert": True}]})
    assert reply["writeErrors"][0]["errmsg"] == "can't $divide by zero"
    err = run({"update": "c", "updates": [{"q": {"_id": 5}, "u": [{"$bogus": {}}]}]})["writeErrors"][0]
    assert err["code"] == 72  # a stage that may not be used in an update still fails without a match
    assert run.find("c") == [{"_id": 1, "a": 1}]
