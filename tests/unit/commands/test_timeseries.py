"""Time-series collections through the commands: create's checks, listCollections, indexes,
explain, collStats, writes and their errors."""
from __future__ import annotations

import datetime

import pytest

T0 = datetime.datetime(2024, 5, 1)


def at(minutes: float) -> datetime.datetime:
    return T0 + datetime.timedelta(minutes=minutes)


@pytest.mark.parametrize("spec,code,message", [
    ({}, 40414, "BSON field 'create.timeseries.timeField' is missing but a required field"),
    ({"timeField": 1}, 14, "BSON field 'create.timeseries.timeField' is the wrong type 'int', expected type 'string'"),
    ({"timeField": "t", "bogus": 1}, 40415, "BSON field 'create.timeseries.bogus' is an unknown field."),
    ({"timeField": "t", "granularity": "days"}, 2,
     "Enumeration value 'days' for field 'create.timeseries.granularity' is not a valid value."),
    ({"timeField": "t", "granularity": "seconds", "bucketMaxSpanSeconds": 100}, 72,
     "Timeseries 'bucketMaxSpanSeconds' is not configurable to a value other than the default of 3600 "
     "for the provided granularity"),
    ({"timeField": "t", "granularity": "hours", "bucketRoundingSeconds": 60}, 72,
     "Timeseries 'bucketRoundingSeconds' is not configurable to a value other than the default of 86400 "
     "for the provided granularity"),
    ({"timeField": "t", "bucketMaxSpanSeconds": 100}, 72,
     "Timeseries 'bucketMaxSpanSeconds' and 'bucketRoundingSeconds' need to be set alongside each other"),
    ({"timeField": "t", "bucketMaxSpanSeconds": 100, "bucketRoundingSeconds": 50}, 72,
     "Timeseries 'bucketRoundingSeconds' needs to be equal to 'bucketMaxSpanSeconds'"),
    ({"timeField": "t", "metaField": "t"}, 72, "The 'metaField' option cannot be the same as the 'timeField' option"),
])
def test_create_refuses_bad_timeseries_options_and_creates_nothing(run, spec, code, message):
    err = run.error({"create": "w", "timeseries": spec})
    assert (err["code"], err["errmsg"]) == (code, message)
    assert run({"listCollections": 1})["cursor"]["firstBatch"] == []


def test_create_completes_the_options_and_lists_both_namespaces(run):
    run({"create": "w", "timeseries": {"timeField": "t", "metaField": "m"}, "expireAfterSeconds": 3600})
    infos = {i["name"]: i for i in run({"listCollections": 1})["cursor"]["firstBatch"]}
    ts = {"timeField": "t", "metaField": "m", "granularity": "seconds", "bucketRoundingSeconds": 60,
          "bucketMaxSpanSeconds": 3600}
    assert infos["w"] == {"name": "w", "type": "timeseries", "options": {"timeseries": ts, "expireAfterSeconds": 3600},
                          "info": {"readOnly": False}}
    assert list(infos["w"]["options"]["timeseries"]) == list(ts)  # mongod's field order
    assert infos["system.buckets.w"]["type"] == "collection"
    assert infos["system.buckets.w"]["options"] == {"timeseries": ts}
    names = run({"listCollections": 1, "nameOnly": True, "filter": {"type": "timeseries"}})["cursor"]["firstBatch"]
    assert names == [{"name": "w", "type": "timeseries"}]
    assert run.error({"create": "w", "timeseries": {"timeField": "t"}})["code"] == 48


def test_custom_bucketing_and_hours(run):
    run({"create": "a", "timeseries": {"timeField": "t", "bucketMaxSpanSeconds": 7200, "bucketRoundingSeconds": 7200}})
    run({"create": "b", "timeseries": {"timeField": "t", "granularity": "hours"}})
    infos = {i["name"]: i["options"] for i in run({"listCollections": 1})["cursor"]["firstBatch"]}
    assert infos["a"]["timeseries"] == {"timeField": "t", "bucketRoundingSeconds": 7200, "bucketMaxSpanSeconds": 7200}
    assert infos["b"]["timeseries"]["bucketMaxSpanSeconds"] == 2592000


def test_timeseries_refuses_other_collection_options(run):
    assert run.error({"create": "w", "timeseries": {"timeField": "t"}, "capped": True, "size": 10})["code"] == 72
    assert run.error({"create": "w", "timeseries": {"timeField": "t"}, "collation": {"locale": "fr"}})["code"] == 238


def test_default_index_and_created_indexes_translate_keys(run):
    run({"create": "w", "timeseries": {"timeField": "t", "metaField": "m"}})
    [default] = run({"listIndexes": "system.buckets.w"})["cursor"]["firstBatch"][1:]
    assert default["key"] == {"meta": 1, "control.min.t": 1, "control.max.t": 1} and default["name"] == "m_1_t_1"
    run({"createIndexes": "w", "indexes": [{"key": {"m.s": 1, "t": -1}, "name": "s_t"}]})
    buckets = {i["name"]: i["key"] for i in run({"listIndexes": "system.buckets.w"})["cursor"]["firstBatch"]}
    assert buckets["s_t"] == {"meta.s": 1, "control.max.t": -1, "control.min.t": -1}
    shown = {i["name"]: i["key"] for i in run({"listIndexes": "w"})["cursor"]["firstBatch"]}
    assert shown == {"m_1_t_1": {"m": 1, "t": 1}, "s_t": {"m.s": 1, "t": -1}}
    assert run.error({"createIndexes": "w", "indexes": [{"key": {"v": 1}, "name": "v"}]})["code"] == 238


def test_insert_requires_a_date_and_reports_per_document(run):
    run({"create": "w", "timeseries": {"timeField": "t", "metaField": "m"}})
    reply = run({"insert": "w", "documents": [{"t": at(0), "m": 1}, {"t": "noon"}, {"m": 2}, {"t": at(1)}],
                 "ordered": False})
    assert reply["n"] == 2
    assert [(e["index"], e["code"], e["errmsg"]) for e in reply["writeErrors"]] == [
        (1, 2, "'t' must be present and contain a valid BSON UTC datetime value"),
        (2, 2, "'t' must be present and contain a valid BSON UTC datetime value")]
    assert run({"count": "w"})["n"] == 2


def test_buckets_hold_columns_with_control_min_and_max(run):
    run({"create": "w", "timeseries": {"timeField": "t", "metaField": "m"}})
    run.insert("w", {"_id": 1, "t": at(0.5), "m": "a", "v": 5}, {"_id": 2, "t": at(2), "m": "a", "v": 3, "x": 1},
               {"_id": 3, "t": at(3), "m": "b", "v": 9})
    [a, b] = sorted(run.find("system.buckets.w"), key=lambda d: d["meta"])
    assert a["control"] == {"version": 1, "min": {"t": T0, "_id": 1, "v": 3, "x": 1},
                            "max": {"_id": 2, "t": at(2), "v": 5, "x": 1}}
    assert a["data"] == {"_id": {"0": 1, "1": 2}, "t": {"0": at(0.5), "1": at(2)}, "v": {"0": 5, "1": 3}, "x": {"1": 1}}
    assert a["meta"] == "a" and b["meta"] == "b"
    assert a["_id"].generation_time.replace(tzinfo=None) == T0  # the bucket's rounded start
    assert run.find("w", {"_id": 2}) == [{"t": at(2), "m": "a", "_id": 2, "v": 3, "x": 1}]


def test_buckets_close_by_count_and_by_span(run):
    run({"create": "w", "timeseries": {"timeField": "t", "metaField": "m"}})
    run.insert("w", *({"t": at(i / 100), "m": 1} for i in range(1001)))   # 1,001 in 10 minutes
    run.insert("w", {"t": at(75), "m": 1})                                 # past the second bucket's hour
    counts = sorted(len(b["data"]["t"]) for b in run.find("system.buckets.w"))
    assert counts == [1, 1, 1000]
    stats = run({"collStats": "w"})["timeseries"]
    assert run({"collStats": "w"})["nindexes"] == 2
    assert stats["bucketsNs"] == "test.system.buckets.w" and stats["bucketCount"] == 3
    assert (stats["numBucketInserts"], stats["numBucketsOpenedDueToMetadata"], stats["numBucketsClosedDueToCount"],
            stats["numBucketsClosedDueToTimeForward"]) == (3, 1, 1, 1)
    assert stats["numMeasurementsCommitted"] == 1002 and stats["avgNumMeasurementsPerCommit"] == 334
    run.insert("w", {"t": at(76), "m": 1})
    stats = run({"collStats": "w"})["timeseries"]
    assert (stats["numBucketUpdates"], stats["numBucketsReopened"]) == (1, 0)   # still the open bucket
    assert run({"count": "system.buckets.w"})["n"] == 3


def test_explain_shows_the_bucket_filter_and_the_unpack_stage(run):
    run({"create": "w", "timeseries": {"timeField": "t", "metaField": "m"}})
    run.insert("w", *({"t": at(i), "m": i % 4} for i in range(300)))
    filt = {"m": 2, "t": {"$gte": at(60), "$lt": at(120)}}
    reply = run({"explain": {"find": "w", "filter": filt}, "verbosity": "executionStats"})
    cursor, unpack = reply["stages"]
    planner = cursor["$cursor"]["queryPlanner"]
    assert planner["namespace"] == "test.system.buckets.w"
    assert {"meta": 2} in planner["parsedQuery"]["$and"]
    assert {"control.max.t": {"$gte": at(60)}} in planner["parsedQuery"]["$and"]
    assert planner["winningPlan"]["inputStage"]["indexName"] == "m_1_t_1"
    assert unpack["$_internalUnpackBucket"]["eventFilter"] == filt
    # m=2 has a measurement every 4 minutes: buckets [2, 62) and [62, 122) hold the hour asked for
    assert cursor["$cursor"]["executionStats"]["totalDocsExamined"] == 2
    assert len(run.find("w", filt)) == 15
    agg = run({"explain": {"aggregate": "w", "pipeline": [{"$match": {"m": 1}}, {"$count": "n"}], "cursor": {}},
               "verbosity": "queryPlanner"})
    assert [next(iter(s)) for s in agg["stages"]] == ["$cursor", "$_internalUnpackBucket", "$count"]


def test_deletes_and_updates(run):
    run({"create": "w", "timeseries": {"timeField": "t", "metaField": "m"}})
    run.insert("w", *({"_id": i, "t": at(i), "m": i % 2, "v": i} for i in range(10)))
    assert run({"delete": "w", "deletes": [{"q": {"m": 0}, "limit": 0}]})["n"] == 5
    assert run({"delete": "w", "deletes": [{"q": {"v": {"$gt": 6}}, "limit": 1}]})["n"] == 1
    assert sorted(d["_id"] for d in run.find("w")) == [1, 3, 5, 9]
    reply = run({"update": "w", "updates": [{"q": {"m": 1}, "u": {"$set": {"m": 7}}, "multi": True}]})
    assert (reply["n"], reply["nModified"]) == (4, 4)
    reply = run({"update": "w", "updates": [{"q": {"_id": 9}, "u": {"$inc": {"v": 1}}}]})
    assert (reply["n"], reply["nModified"]) == (1, 1)
    assert sorted((d["_id"], d["m"], d["v"]) for d in run.find("w")) == [(1, 7, 1), (3, 7, 3), (5, 7, 5), (9, 7, 10)]
    assert {b["meta"] for b in run.find("system.buckets.w")} == {7}
    reply = run({"update": "w", "updates": [{"q": {}, "u": {"$set": {"v": 0}}, "upsert": True}]})
    assert reply["n"] == 0 and reply["writeErrors"][0]["code"] == 238
    assert run.error({"findAndModify": "w", "query": {}, "remove": True})["code"] == 238


def test_drop_removes_the_buckets_too(run):
    run({"create": "w", "timeseries": {"timeField": "t"}})
    run.insert("w", {"t": at(0)})
    run({"drop": "w"})
    assert run({"listCollections": 1})["cursor"]["firstBatch"] == []


def test_collmod_and_rename_are_refused(run, admin):
    run({"create": "w", "timeseries": {"timeField": "t", "metaField": "m"}})
    assert run.error({"collMod": "w", "validator": {}})["code"] == 72   # as on a view
    assert run.error({"collMod": "w", "viewOn": "x"})["code"] == 238
    assert run.error({"collMod": "w", "timeseries": {"bucketMaxSpanSeconds": 9000}})["code"] == 238
    err = admin.error({"renameCollection": "test.w", "to": "test.x"})
    assert (err["code"], err["errmsg"]) == (20, "Renaming a time-series collection is not allowed")


def test_coll_stats_stage_reports_the_buckets(run):
    run({"create": "w", "timeseries": {"timeField": "t", "metaField": "m"}})
    run.insert("w", *({"t": at(i), "m": i % 2} for i in range(10)))
    reply = run({"aggregate": "w", "pipeline": [{"$collStats": {"storageStats": {}, "count": {}}}], "cursor": {}})
    [stats] = reply["cursor"]["firstBatch"]
    assert stats["ns"] == "test.w" and stats["count"] == 2
    assert stats["storageStats"]["timeseries"]["bucketCount"] == 2 and stats["storageStats"]["nindexes"] == 2


def test_collmod_raises_the_granularity_only(run):
    run({"create": "w", "timeseries": {"timeField": "t", "metaField": "m"}})
    run({"create": "plain"})
    run.insert("w", {"t": at(0), "m": 1})
    run({"collMod": "w", "timeseries": {"granularity": "minutes"}})
    [info] = run({"listCollections": 1, "filter": {"name": "w"}})["cursor"]["firstBatch"]
    assert info["options"]["timeseries"] == {"timeField": "t", "metaField": "m", "granularity": "minutes",
                                             "bucketRoundingSeconds": 3600, "bucketMaxSpanSeconds": 86400}
    run.insert("w", {"t": at(600), "m": 1})      # ten hours later: inside the first bucket's new day
    assert run({"count": "system.buckets.w"})["n"] == 1
    assert len(run.find("w", {"t": {"$gte": at(500)}})) == 1
    err = run.error({"collMod": "w", "timeseries": {"granularity": "seconds"}})
    assert (err["code"], err["errmsg"]) == (72, "Invalid transition for timeseries.granularity. Can only "
                                                "transition from 'seconds' to 'minutes' or 'minutes' to 'hours'.")
    err = run.error({"collMod": "plain", "timeseries": {"granularity": "hours"}})
    assert (err["code"], err["errmsg"]) == (72, "option only supported on a time-series collection: timeseries")


def test_time_series_checks_come_before_the_update_checks(run):
    """The time-series namespace is found in the write batch; a bad update or name is still
    answered as the time-series path answers it."""
    run({"create": "w", "timeseries": {"timeField": "t", "metaField": "m"}})
    assert run.error({"findAndModify": "w", "query": {}, "update": {"$bad": {"a": 1}}})["code"] == 238
    assert run.error({"findAndModify": "w", "query": {}, "update": {"$set": {"a": 1}}})["code"] == 238
    reply = run({"update": "w", "updates": [{"q": {}, "u": {"$set": {"v": 0}}, "upsert": True}]})
    assert reply["writeErrors"][0]["code"] == 238
    assert run.error({"findAndModify": "nots", "query": {}, "update": {"$bad": {"a": 1}}})["code"] == 9
