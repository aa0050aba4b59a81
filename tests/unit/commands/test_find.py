"""find, getMore, killCursors: parameters, cursor replies and cursor errors."""
from __future__ import annotations

import bson
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


@pytest.fixture
def keyed(run):
    run.insert("c", *({"_id": i, "a": i % 5, "b": float(i), "t": [i, i + 100]} for i in range(10)))
    run({"createIndexes": "c", "indexes": [{"key": {"a": 1, "b": -1}, "name": "ab"}, {"key": {"t": 1}, "name": "t_1"}]})
    return run


def test_min_and_max_bound_the_hinted_index_scan(keyed):
    found = keyed.find("c", min={"a": 2, "b": 100}, max={"a": 3, "b": 100}, hint="ab")
    assert [d["_id"] for d in found] == [7, 2]  # a = 2, b descending
    assert [d["_id"] for d in keyed.find("c", {"b": {"$lt": 5}}, min={"a": 3, "b": 8}, hint={"a": 1, "b": -1})] == [
        3, 4]  # min inclusive, no max: to the end of the index, the filter applied
    assert [d["_id"] for d in keyed.find("c", max={"a": 1, "b": 1.0}, hint="ab")] == [5, 0, 6]  # max exclusive
    explain = keyed.explain("c", {}, min={"a": 2, "b": 100}, max={"a": 3, "b": 100}, hint="ab")
    scan = explain["queryPlanner"]["winningPlan"]["inputStage"]
    assert scan["stage"] == "IXSCAN" and scan["indexName"] == "ab"
    assert explain["executionStats"]["nReturned"] == 2


@pytest.mark.parametrize("cmd,code,message", [
    ({"min": {"a": 1, "b": 1}}, 51173, "When using min()/max() a hint of which index to use must be provided"),
    ({"min": {"a": 1}, "hint": "ab"}, 51174, "The index chosen is not valid for min/max"),
    ({"max": {"b": 1, "a": 1}, "hint": "ab"}, 51174, "The index chosen is not valid for min/max"),
    ({"min": {"a": 1, "b": 1}, "max": {"a": 1}, "hint": "ab"}, 51176, "min and max must have the same field names"),
    ({"min": {"a": 3, "b": 1}, "max": {"a": 2, "b": 1}, "hint": "ab"}, 51175,
     "The value provided for min() does not come before the value provided for max() in the hinted index"),
    ({"min": {"a": 1, "b": 1}, "hint": {"$natural": 1}}, 2, "min and max are incompatible with $natural"),
    ({"min": 5, "hint": "ab"}, 14, "BSON field 'find.min' is the wrong type 'int', expected type 'object'"),
])
def test_min_and_max_errors(keyed, cmd, code, message):
    err = keyed.error({"find": "c", **cmd})
    assert (err["code"], err["errmsg"]) == (code, message)


def test_return_key_answers_the_index_keys(keyed):
    assert keyed.find("c", {"a": 4}, returnKey=True) == [{"a": 4, "b": 9.0}, {"a": 4, "b": 4.0}]
    assert keyed.find("c", {"_id": 4}, returnKey=True) == [{"_id": 4}]
    assert keyed.find("c", {"t": {"$gt": 107}}, returnKey=True) == [{"t": 108}, {"t": 109}]  # the multikey entry
    assert keyed.find("c", {"b": 2.0}, returnKey=True) == [{}]  # a collection scan has no key
    assert keyed.find("c", {"a": 1}, sort={"b": 1}, projection={"_id": 1}, returnKey=True) == [
        {"a": 1, "b": 1.0}, {"a": 1, "b": 6.0}]  # the key takes the projection's place
    plan = keyed.explain("c", {"a": 1}, returnKey=True)["queryPlanner"]["winningPlan"]
    assert plan["stage"] == "RETURN_KEY" and plan["inputStage"]["stage"] == "FETCH"


def test_return_key_keeps_the_document_types_of_the_key(run):
    from bson.int64 import Int64
    run.insert("c", {"_id": 1, "k": Int64(3)}, {"_id": 2, "k": 3.0})
    run({"createIndexes": "c", "indexes": [{"key": {"k": 1}, "name": "k_1"}]})
    keys = run.find("c", {"k": 3}, returnKey=True)
    assert keys == [{"k": 3}, {"k": 3.0}] and type(keys[0]["k"]) is Int64 and type(keys[1]["k"]) is float


def test_show_record_id_appends_the_record_id(keyed):
    found = keyed.find("c", {"a": 1}, projection={"b": 1}, showRecordId=True)
    assert [list(d) for d in found] == [["_id", "b", "$recordId"]] * 2
    from bson.int64 import Int64
    assert all(isinstance(d["$recordId"], Int64) and d["$recordId"] > 0 for d in found)
    assert keyed.find("c", {"_id": 3}, showRecordId=True)[0]["$recordId"] == keyed.find(
        "c", {"_id": 3}, returnKey=True, showRecordId=True)[0]["$recordId"]


@pytest.mark.parametrize("option,value", [("min", {"a": 1}), ("max", {"a": 1}), ("returnKey", True),
                                          ("showRecordId", True)])
def test_min_max_return_key_and_show_record_id_on_a_view_are_168(run, option, value):
    run({"create": "v", "viewOn": "c", "pipeline": []})
    err = run.error({"find": "v", option: value})
    assert (err["code"], err["errmsg"]) == (168, f"Option {option} not supported in aggregation.")


def test_a_tailable_cursor_whose_position_was_overwritten_is_lost(run):
    run({"create": "log", "capped": True, "size": 100000, "max": 3})
    run.insert("log", *({"_id": i} for i in range(3)))
    first = run({"find": "log", "tailable": True})["cursor"]
    assert [d["_id"] for d in first["firstBatch"]] == [0, 1, 2]
    run.insert("log", {"_id": 3})  # evicts _id 0: the cursor stands on _id 2, still there
    more = run({"getMore": first["id"], "collection": "log"})["cursor"]
    assert [d["_id"] for d in more["nextBatch"]] == [3]
    run.insert("log", *({"_id": i} for i in range(4, 8)))  # evicts _id 3, where the cursor stood
    err = run.error({"getMore": first["id"], "collection": "log"})
    assert (err["code"], err["codeName"]) == (136, "CappedPositionLost")
    assert err["errmsg"].startswith("CollectionScan died due to position in capped collection being deleted. "
                                    "Last seen record id: RecordId(")
    assert run.error({"getMore": first["id"], "collection": "log"})["code"] == 43  # the cursor is gone


def test_a_tailable_cursor_in_the_middle_of_a_pass_checks_its_position_too(run):
    run({"create": "log", "capped": True, "size": 100000, "max": 5})
    run.insert("log", *({"_id": i} for i in range(5)))
    first = run({"find": "log", "tailable": True, "batchSize": 2})["cursor"]
    assert [d["_id"] for d in first["firstBatch"]] == [0, 1]
    run.insert("log", *({"_id": i} for i in range(5, 8)))  # evicts 0, 1, 2
    assert run.error({"getMore": first["id"], "collection": "log"})["code"] == 136


def test_tailable_cursors_refuse_what_they_do_not_support(run):
    run({"create": "log", "capped": True, "size": 4096})
    err = run.error({"find": "log", "tailable": True, "sort": {"a": 1}})
    assert (err["code"], err["errmsg"]) == (2, "cannot use tailable option with a sort other than {$natural: 1}")
    for option, value in (("skip", 1), ("showRecordId", True), ("returnKey", True)):
        assert run.error({"find": "log", "tailable": True, option: value})["code"] == 238


def test_a_getmore_of_16_mib_of_small_documents_fits_in_one_reply(run):
    """The batch limit counts each document's array-element overhead (mongod's rule), so the
    encoded reply stays within the 16 MiB + 16 KiB a reply document may be."""
    from ginkgodb.commands import dispatch
    from ginkgodb.limits import MAX_BSON_OBJECT_SIZE, MAX_INTERNAL_BSON_SIZE
    pad = "x" * 980
    for start in range(0, 18_000, 2_000):
        run.insert("small", *[{"_id": i, "p": pad} for i in range(start, start + 2_000)])
    first = run({"find": "small", "batchSize": 1})["cursor"]
    reply = dispatch(run.ctx, {"getMore": first["id"], "collection": "small", "$db": "test"})
    size = len(bson.encode(reply))
    batch = reply["cursor"]["nextBatch"]
    assert MAX_BSON_OBJECT_SIZE - 65_536 < size <= MAX_INTERNAL_BSON_SIZE and 15_000 < len(batch) < 17_999
