"""aggregate: the pipeline and cursor parameters, and the cursor reply."""
from __future__ import annotations

import pytest


def test_reply_is_a_cursor_on_the_collection(run):
    run.insert("c", *({"_id": i} for i in range(3)))
    reply = run({"aggregate": "c", "pipeline": [{"$match": {"_id": {"$gte": 1}}}, {"$count": "n"}], "cursor": {}})
    assert reply == {"cursor": {"firstBatch": [{"n": 2}], "id": 0, "ns": "test.c"}, "ok": 1.0}


def test_batch_size_leaves_a_cursor_open(run):
    run.insert("c", *({"_id": i} for i in range(3)))
    first = run({"aggregate": "c", "pipeline": [], "cursor": {"batchSize": 1}})["cursor"]
    assert first["firstBatch"] == [{"_id": 0}] and first["id"] != 0
    rest = run({"getMore": first["id"], "collection": "c"})["cursor"]
    assert rest["nextBatch"] == [{"_id": 1}, {"_id": 2}] and rest["id"] == 0


def test_aggregate_one_runs_a_collectionless_pipeline(run):
    reply = run({"aggregate": 1, "pipeline": [{"$documents": [{"x": 1}]}], "cursor": {}})
    assert reply["cursor"] == {"firstBatch": [{"x": 1}], "id": 0, "ns": "test.$cmd.aggregate"}


def test_pipeline_is_required_and_an_array(run):
    err = run.error({"aggregate": "c", "cursor": {}})
    assert (err["code"], err["errmsg"]) == (40414, "BSON field 'aggregate.pipeline' is missing but a required field")
    err = run.error({"aggregate": "c", "pipeline": {}, "cursor": {}})
    assert (err["code"], err["errmsg"]) == (14, "BSON field 'aggregate.pipeline' is the wrong type 'object', "
                                                "expected type 'array'")


def test_cursor_is_required_without_explain(run):
    err = run.error({"aggregate": "c", "pipeline": []})
    assert (err["code"], err["errmsg"]) == (9, "The 'cursor' option is required, except for aggregate with "
                                               "the explain argument")
    assert "queryPlanner" in run({"aggregate": "c", "pipeline": [], "explain": True})


def test_stage_errors(run):
    err = run.error({"aggregate": "c", "pipeline": [{"$match": {}, "$limit": 1}], "cursor": {}})
    assert (err["code"], err["errmsg"]) == (40323, "A pipeline stage specification object must contain exactly one field.")
    err = run.error({"aggregate": "c", "pipeline": [{"$bogus": 1}], "cursor": {}})
    assert (err["code"], err["errmsg"]) == (40324, "Unrecognized pipeline stage name: '$bogus'")


def test_aggregate_target_must_be_a_name_or_one(run):
    err = run.error({"aggregate": 2, "pipeline": [], "cursor": {}})
    assert (err["code"], err["errmsg"]) == (9, "Invalid command format: the 'aggregate' field must specify a "
                                               "collection name or 1")


def test_unknown_field_and_bad_batch_size(run):
    assert run.error({"aggregate": "c", "pipeline": [], "cursor": {}, "bogus": 1})["code"] == 40415
    err = run.error({"aggregate": "c", "pipeline": [], "cursor": {"batchSize": -1}})
    assert (err["code"], err["errmsg"]) == (51024, "BSON field 'batchSize' value must be >= 0, actual value '-1'")


def test_coll_stats_storage_stats_of_a_capped_collection_have_max_and_max_size(run):
    run({"create": "cap", "capped": True, "size": 1000, "max": 5})
    run({"create": "plain"})
    stats = run({"aggregate": "cap", "pipeline": [{"$collStats": {"storageStats": {}}}],
                 "cursor": {}})["cursor"]["firstBatch"][0]["storageStats"]
    assert (stats["capped"], stats["max"], stats["maxSize"]) == (True, 5, 1024)  # size rounded up to 256
    scaled = run({"aggregate": "cap", "pipeline": [{"$collStats": {"storageStats": {"scale": 1024}}}],
                  "cursor": {}})["cursor"]["firstBatch"][0]["storageStats"]
    assert scaled["maxSize"] == 1
    plain = run({"aggregate": "plain", "pipeline": [{"$collStats": {"storageStats": {}}}],
                 "cursor": {}})["cursor"]["firstBatch"][0]["storageStats"]
    assert plain["capped"] is False and "max" not in plain and "maxSize" not in plain
    assert run({"collStats": "cap"})["maxSize"] == 1024


def test_aggregate_hint_reaches_the_pushed_down_find(run):
    run.insert("c", {"a": 1, "b": 2})
    run({"createIndexes": "c", "indexes": [{"key": {"a": 1}, "name": "a_1"}, {"key": {"b": 1}, "name": "b_1"}]})
    explained = run({"aggregate": "c", "pipeline": [{"$match": {"a": 1}}, {"$group": {"_id": "$a"}}],
                     "explain": True, "hint": "b_1"})
    scan = explained["stages"][0]["$cursor"]["queryPlanner"]["winningPlan"]["inputStage"]
    assert scan["indexName"] == "b_1"
    found = run({"aggregate": "c", "pipeline": [{"$match": {"a": 1}}], "cursor": {}, "hint": {"b": 1}})
    assert [d["b"] for d in found["cursor"]["firstBatch"]] == [2]


@pytest.mark.parametrize("pipeline", [[{"$match": {"a": 1}}], [{"$group": {"_id": "$a"}}], []])
@pytest.mark.parametrize("batch_size", [None, 0])
def test_aggregate_hint_of_a_missing_index_is_bad_value(run, pipeline, batch_size):
    run.insert("c", {"a": 1})
    cursor = {} if batch_size is None else {"batchSize": batch_size}
    err = run.error({"aggregate": "c", "pipeline": pipeline, "cursor": cursor, "hint": "nope"})
    assert (err["code"], err["errmsg"]) == (2, "hint provided does not correspond to an existing index")
