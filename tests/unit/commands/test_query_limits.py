"""Bounded work per request: mongod's limits on $range, strings, arrays, accumulators, blocking
sorts and $group, with spilling to disk under allowDiskUse (both storage engines)."""
from __future__ import annotations

import pytest

from ginkgodb.commands.server_parameters import PARAMETERS

MB100 = 104857600


@pytest.fixture
def knob():
    """setParameter for the test; every parameter set is restored afterwards."""
    saved: dict = {}

    def set_knob(name: str, value) -> None:
        saved.setdefault(name, PARAMETERS.value(name))
        PARAMETERS.set(name, value)
    yield set_knob
    for name, value in saved.items():
        PARAMETERS.set(name, value)


def agg(run, pipeline, coll="c", **kw):
    return run.raw({"aggregate": coll, "pipeline": pipeline, "cursor": {"batchSize": 100000}, **kw})


def one(run, expr):
    """Evaluate an expression over a one-document collection."""
    run.insert("one", {"_id": 1})
    reply = agg(run, [{"$project": {"_id": 0, "v": expr}}], "one")
    return reply


# ---- expressions -------------------------------------------------------------------------------

def test_range_beyond_the_memory_limit_answers_146(run):
    reply = one(run, {"$size": {"$range": [0, 20000000]}})
    assert (reply["code"], reply["codeName"]) == (146, "ExceededMemoryLimit")
    assert reply["errmsg"] == ("$range would use too much memory (320000040 bytes) and cannot spill to disk. "
                               f"Memory limit: {MB100} bytes")


def test_range_memory_counts_as_mongod_and_follows_the_parameter(run, knob):
    # mongod's estimate: 24 + 16 bytes per element, the length from truncating division
    assert one(run, {"$size": {"$range": [0, 6553597]}})["cursor"]["firstBatch"] == [{"v": 6553597}]
    assert one(run, {"$size": {"$range": [0, 6553598]}})["code"] == 146
    knob("internalQueryMaxRangeBytes", 1000)
    assert one(run, {"$size": {"$range": [0, 59]}})["cursor"]["firstBatch"] == [{"v": 59}]
    assert one(run, {"$size": {"$range": [0, 60]}})["code"] == 146
    assert one(run, {"$range": [0, 100, 3]})["cursor"]["firstBatch"] == [{"v": list(range(0, 100, 3))}]
    reply = one(run, {"$range": [0, 100, 1]})
    assert reply["errmsg"] == "$range would use too much memory (1640 bytes) and cannot spill to disk. Memory limit: 1000 bytes"
    assert one(run, {"$range": [10, 0, -1]})["cursor"]["firstBatch"] == [{"v": list(range(10, 0, -1))}]


def test_concat_in_reduce_stops_at_16_mib(run):
    doubling = {"$reduce": {"input": {"$range": [0, 30]}, "initialValue": "a",
                            "in": {"$concat": ["$$value", "$$value"]}}}
    reply = one(run, {"$strLenBytes": doubling})
    assert (reply["code"], reply["codeName"], reply["errmsg"]) == (
        16493, "Location16493", "Tried to create string longer than 16MB")


def test_replace_all_cannot_grow_a_string_past_16_mib(run):
    reply = one(run, {"$replaceAll": {"input": "a" * 1_000_000, "find": "a", "replacement": "b" * 17}})
    assert reply["code"] == 16493
    ok = one(run, {"$strLenCP": {"$replaceAll": {"input": "a" * 1_000, "find": "a", "replacement": "bb"}}})
    assert ok["cursor"]["firstBatch"] == [{"v": 2000}]


def test_concat_arrays_in_reduce_is_bounded(run):
    doubling = {"$reduce": {"input": {"$range": [0, 40]}, "initialValue": [1],
                            "in": {"$concatArrays": ["$$value", "$$value"]}}}
    reply = one(run, {"$size": doubling})
    assert reply["code"] == 146
    assert reply["errmsg"].startswith("$concatArrays would use too much memory (")


def test_push_and_add_to_set_follow_their_limits(run, knob):
    run.insert("c", *({"_id": i, "s": f"string {i}"} for i in range(50)))
    assert agg(run, [{"$group": {"_id": None, "p": {"$push": "$s"}}}])["ok"] == 1.0
    knob("internalQueryMaxPushBytes", 100)
    reply = agg(run, [{"$group": {"_id": None, "p": {"$push": "$s"}}}])
    assert (reply["code"], reply["errmsg"]) == (146, "$push used too much memory and cannot spill to disk. "
                                                     "Memory limit: 100 bytes")
    knob("internalQueryMaxAddToSetBytes", 100)
    reply = agg(run, [{"$group": {"_id": None, "p": {"$addToSet": "$s"}}}])
    assert (reply["code"], reply["errmsg"]) == (146, "$addToSet used too much memory and cannot spill to disk. "
                                                     "Memory limit: 100 bytes")


def test_a_result_document_above_16_mib_answers_10334(run):
    run.insert("c", {"_id": 1, "s": "x" * 9_000_000})
    reply = agg(run, [{"$project": {"a": "$s", "b": "$s"}}])
    assert (reply["code"], reply["codeName"]) == (10334, "BSONObjectTooLarge")
    assert reply["errmsg"].startswith("BSONObj size: 180000")
    assert "is invalid. Size must be between 0 and 16793600(16MB) First element: _id: 1" in reply["errmsg"]


def test_limit_parameters_are_validated(admin):
    for name in ("internalQueryMaxBlockingSortMemoryUsageBytes", "internalDocumentSourceGroupMaxMemoryBytes",
                 "internalQueryMaxRangeBytes", "internalQueryMaxPushBytes", "internalQueryMaxAddToSetBytes"):
        assert admin({"getParameter": 1, name: 1})[name] == MB100
        assert admin.error({"setParameter": 1, name: -1})["code"] == 2
        assert admin.error({"setParameter": 1, name: "x"})["code"] == 2
    assert admin({"getParameter": 1, "allowDiskUseByDefault": 1})["allowDiskUseByDefault"] is True


# ---- blocking sort and $group -----------------------------------------------------------------

DOCS = [{"_id": i, "k": (i * 7919) % 500, "g": i % 37, "pad": "p" * (i % 50)} for i in range(500)]


@pytest.fixture
def small_limits(run, knob):
    """500 documents of 30-80 bytes against limits of 4,000 bytes."""
    run.insert("c", *DOCS)
    knob("internalQueryMaxBlockingSortMemoryUsageBytes", 4000)
    knob("internalDocumentSourceGroupMaxMemoryBytes", 4000)
    return run


def _sorted_ids(docs, *keys):
    return [d["_id"] for d in sorted(docs, key=lambda d: tuple(d[k] for k in keys))]


def test_find_sort_beyond_the_limit_without_disk_use_answers_292(small_limits):
    reply = small_limits.raw({"find": "c", "sort": {"k": 1}, "allowDiskUse": False})
    assert (reply["code"], reply["codeName"]) == (292, "QueryExceededMemoryLimitNoDiskUseAllowed")
    assert reply["errmsg"] == "Sort exceeded memory limit of 4000 bytes, but did not opt in to external sorting."


def test_find_sort_spills_with_allow_disk_use_and_by_default(small_limits, knob):
    expected = _sorted_ids(DOCS, "k", "_id")
    for extra in ({"allowDiskUse": True}, {}):
        got = small_limits.find("c", sort={"k": 1, "_id": 1}, **extra)
        assert [d["_id"] for d in got] == expected
        assert got == sorted(DOCS, key=lambda d: (d["k"], d["_id"]))
    knob("allowDiskUseByDefault", False)
    assert small_limits.raw({"find": "c", "sort": {"k": 1}})["code"] == 292


def test_find_sort_spill_is_stable_and_descending(small_limits):
    got = small_limits.find("c", sort={"g": -1}, allowDiskUse=True)
    # equal keys keep their scan order (the _id order here), as the in-memory sort does
    assert [d["_id"] for d in got] == [d["_id"] for d in sorted(DOCS, key=lambda d: (-d["g"], d["_id"]))]


def test_find_sort_spill_shows_in_explain(small_limits):
    reply = small_limits({"explain": {"find": "c", "sort": {"k": 1}, "allowDiskUse": True},
                          "verbosity": "executionStats"})
    stage = reply["executionStats"]["executionStages"]
    while stage["stage"] != "SORT":
        stage = stage["inputStage"]
    assert stage["memLimit"] == 4000 and stage["usedDisk"] is True and stage["spills"] > 0


def test_find_sort_with_a_limit_keeps_only_the_top_k(small_limits):
    got = small_limits.find("c", sort={"k": 1, "_id": 1}, limit=5, allowDiskUse=False)
    assert [d["_id"] for d in got] == _sorted_ids(DOCS, "k", "_id")[:5]


def test_aggregate_sort_after_a_stage_spills_or_answers_292(small_limits):
    pipeline = [{"$project": {"k": 1, "pad": 1}}, {"$sort": {"k": -1, "_id": 1}}]
    reply = agg(small_limits, pipeline, allowDiskUse=False)
    assert (reply["code"], reply["errmsg"]) == (
        292, "Sort exceeded memory limit of 4000 bytes, but did not opt in to external sorting.")
    got = agg(small_limits, pipeline, allowDiskUse=True)["cursor"]["firstBatch"]
    assert [d["_id"] for d in got] == [d["_id"] for d in sorted(DOCS, key=lambda d: (-d["k"], d["_id"]))]


def test_group_beyond_the_limit_without_disk_use_answers_292(small_limits):
    reply = agg(small_limits, [{"$group": {"_id": "$_id", "all": {"$push": "$$ROOT"}}}], allowDiskUse=False)
    assert (reply["code"], reply["codeName"], reply["errmsg"]) == (
        292, "QueryExceededMemoryLimitNoDiskUseAllowed",
        "Exceeded memory limit for $group, but didn't allow external sort. Pass allowDiskUse:true to opt in.")


def test_group_spills_with_allow_disk_use(small_limits):
    pipeline = [{"$group": {"_id": "$g", "n": {"$sum": 1}, "ids": {"$push": "$_id"}, "first": {"$first": "$_id"},
                            "last": {"$last": "$k"}, "pads": {"$addToSet": "$pad"}}}]
    got = agg(small_limits, pipeline, allowDiskUse=True)["cursor"]["firstBatch"]
    expected = {}
    for d in DOCS:
        e = expected.setdefault(d["g"], {"_id": d["g"], "n": 0, "ids": [], "first": d["_id"], "pads": []})
        e["n"] += 1
        e["ids"].append(d["_id"])
        e["last"] = d["k"]
        if d["pad"] not in e["pads"]:
            e["pads"].append(d["pad"])
    assert sorted(got, key=lambda d: d["_id"]) == [expected[g] for g in sorted(expected)]


def test_spill_files_go_under_the_data_directory(small_limits, engine):
    small_limits.find("c", sort={"k": 1}, allowDiskUse=True)
    path = getattr(engine.kv, "path", None)
    if path is None:
        assert engine.temp_dir() is None  # the in-memory engine spills to the system's temporary directory
    else:
        import os
        assert engine.temp_dir() == os.path.join(path, "_tmp")
        assert os.path.isdir(engine.temp_dir()) and os.listdir(engine.temp_dir()) == []  # files are anonymous


def test_allow_disk_use_must_be_a_boolean(run):
    reply = run.raw({"find": "c", "allowDiskUse": "yes"})
    assert reply["code"] == 14
    reply = agg(run, [], allowDiskUse="yes")
    assert reply["code"] == 14
