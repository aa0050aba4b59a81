"""find, getMore, killCursors: parameters, cursor replies and cursor errors."""
from __future__ import annotations

import pytest


def test_find_reply_is_a_cursor_with_its_namespace(run):
    run.insert("c", {"_id": 1}, {"_id": 2})
    reply = run({"find": "c", "filter": {"_id": {"$gt": 1}}})
    assert reply == {"cursor": {"firstBatch": [{"_id": 2}], "id": 0, "ns": "test.c"}, "ok": 1.0}


def test_find_on_a_missing_collection_is_an_empty_cursor(run):
    assert run({"find": "nope"})["cursor"] == {"firstBatch": [], "id": 0, "ns": "test.nope"}


@pytest.mark.parametrize("field,value,expected", [
    ("filter", 1, "'find.filter' is the wrong type 'int', expected type 'object'"),
    ("sort", "a", "'find.sort' is the wrong type 'string', expected type 'object'"),
    ("projection", [1], "'find.projection' is the wrong type 'array', expected type 'object'"),
    ("singleBatch", "x", "'find.singleBatch' is the wrong type 'string', expected type 'bool'"),
    ("skip", "1", "'find.skip' is the wrong type 'string', expected types '[long, int, decimal, double]'"),
    ("collation", 1, "'find.collation' is the wrong type 'int', expected type 'object'"),
])
def test_find_fields_of_the_wrong_type_are_type_mismatch(run, field, value, expected):
    err = run.error({"find": "c", field: value})
    assert (err["code"], err["codeName"], err["errmsg"]) == (14, "TypeMismatch", "BSON field " + expected)


def test_find_collection_name_must_be_a_string(run):
    err = run.error({"find": 1})
    assert (err["code"], err["errmsg"]) == (73, "collection name has invalid type int")


def test_negative_batch_size_is_51024(run):
    err = run.error({"find": "c", "batchSize": -1})
    assert (err["code"], err["errmsg"]) == (51024, "BSON field 'batchSize' value must be >= 0, actual value '-1'")


@pytest.mark.parametrize("field", ["skip", "limit"])
def test_negative_skip_or_limit_is_51024(run, field):
    err = run.error({"find": "c", field: -1})
    assert (err["code"], err["errmsg"]) == (51024, f"BSON field '{field}' value must be >= 0, actual value '-1'")


def test_batch_size_zero_opens_a_cursor_without_documents(run):
    run.insert("c", {"_id": 1})
    first = run({"find": "c", "batchSize": 0})["cursor"]
    assert first["firstBatch"] == [] and first["id"] != 0
    assert run({"getMore": first["id"], "collection": "c"})["cursor"]["nextBatch"] == [{"_id": 1}]


def test_single_batch_closes_the_cursor(run):
    run.insert("c", *({"_id": i} for i in range(5)))
    assert run({"find": "c", "batchSize": 2, "singleBatch": True})["cursor"]["id"] == 0


def test_await_data_needs_tailable(run):
    err = run.error({"find": "c", "awaitData": True})
    assert (err["code"], err["errmsg"]) == (9, "Cannot set 'awaitData' without also setting 'tailable'")


def test_tailable_needs_a_capped_collection(run):
    run.insert("c", {})
    err = run.error({"find": "c", "tailable": True})
    assert (err["code"], err["errmsg"]) == (2, "tailable cursor requested on non capped collection")


def test_an_invalid_filter_fails_without_a_cursor(run):
    err = run.error({"find": "c", "filter": {"$bogus": 1}})
    assert err["code"] == 2 and err["errmsg"].startswith("unknown top level operator: $bogus.")


def test_cursor_batches_and_get_more(run):
    run.insert("c", *({"_id": i} for i in range(250)))
    first = run({"find": "c", "filter": {}})
    assert len(first["cursor"]["firstBatch"]) == 101 and first["cursor"]["id"] != 0
    cid = first["cursor"]["id"]
    second = run({"getMore": cid, "collection": "c", "batchSize": 100})
    assert [d["_id"] for d in second["cursor"]["nextBatch"]] == list(range(101, 201))
    third = run({"getMore": cid, "collection": "c"})
    assert len(third["cursor"]["nextBatch"]) == 49 and third["cursor"]["id"] == 0
    assert run.error({"getMore": cid, "collection": "c"})["code"] == 43


def test_get_more_parameters(run):
    assert run.error({"getMore": 5})["errmsg"] == "BSON field 'getMore.collection' is missing but a required field"
    assert run.error({"getMore": 5})["code"] == 40414
    err = run.error({"getMore": 5, "collection": 1})
    assert (err["code"], err["errmsg"]) == (14, "BSON field 'getMore.collection' is the wrong type 'int', "
                                                "expected type 'string'")
    assert run.error({"getMore": 5, "collection": "c", "bogus": 1})["code"] == 40415
    err = run.error({"getMore": 5, "collection": "c"})
    assert (err["code"], err["codeName"], err["errmsg"]) == (43, "CursorNotFound", "cursor id 5 not found")


def test_get_more_cursor_id_must_be_a_long(run):
    err = run.error({"getMore": "x", "collection": "c"})
    assert (err["code"], err["errmsg"]) == (14, "BSON field 'getMore.getMore' is the wrong type 'string', "
                                                "expected type 'long'")


def test_get_more_on_another_namespace_is_unauthorized(run):
    run.insert("c", *({"_id": i} for i in range(3)))
    cid = run({"find": "c", "batchSize": 1})["cursor"]["id"]
    err = run.error({"getMore": cid, "collection": "d"})
    assert (err["code"], err["errmsg"]) == (13, "Requested getMore on namespace 'test.d', but cursor belongs "
                                                "to a different namespace test.c")
    assert run({"getMore": cid, "collection": "c"})["cursor"]["nextBatch"] == [{"_id": 1}, {"_id": 2}]


def test_kill_cursors(run):
    run.insert("c", *({"_id": i} for i in range(10)))
    cid = run({"find": "c", "batchSize": 2})["cursor"]["id"]
    reply = run({"killCursors": "c", "cursors": [cid, 12345]})
    assert reply["cursorsKilled"] == [cid] and reply["cursorsNotFound"] == [12345]


def test_kill_cursors_reply_has_all_four_lists_and_killed_cursors_are_gone(run):
    run.insert("c", *({"_id": i} for i in range(3)))
    cid = run({"find": "c", "batchSize": 1})["cursor"]["id"]
    reply = run({"killCursors": "c", "cursors": [cid]})
    assert reply == {"cursorsKilled": [cid], "cursorsNotFound": [], "cursorsAlive": [], "cursorsUnknown": [],
                     "ok": 1.0}
    assert run.error({"getMore": cid, "collection": "c"})["code"] == 43


def test_kill_cursors_parameters(run):
    err = run.error({"killCursors": "c"})
    assert (err["code"], err["errmsg"]) == (40414, "BSON field 'killCursors.cursors' is missing but a required field")
    err = run.error({"killCursors": "c", "cursors": 5})
    assert (err["code"], err["errmsg"]) == (14, "BSON field 'killCursors.cursors' is the wrong type 'int', "
                                                "expected type 'array'")


def test_hint_by_name_and_bad_hint(run):
    run({"createIndexes": "c", "indexes": [{"key": {"a": 1}, "name": "a_1"}]})
    run.insert("c", {"a": 1})
    assert run.explain("c", {}, hint="a_1")["queryPlanner"]["winningPlan"]["inputStage"]["indexName"] == "a_1"
    err = run.error({"find": "c", "hint": "nope"})
    assert err["code"] == 2 and err["errmsg"] == "hint provided does not correspond to an existing index"
