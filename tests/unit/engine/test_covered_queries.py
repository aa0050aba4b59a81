"""Covered queries: PROJECTION_COVERED over the IXSCAN and no documents read when the index
holds every projected field, as mongod plans them; never where it would change a result."""
from __future__ import annotations

import bson
import pytest

from ginkgodb.commands import CommandContext, dispatch


def run(engine, cmd):
    return dispatch(CommandContext(engine=engine), {**cmd, "$db": "db"})


def ok(engine, cmd):
    reply = run(engine, cmd)
    assert reply["ok"] == 1, reply
    return reply


def find(engine, filt, **extra):
    reply = ok(engine, {"find": "c", "filter": filt, "batchSize": 10_000, **extra})
    return [bson.decode(d.raw) if hasattr(d, "raw") else d for d in reply["cursor"]["firstBatch"]]


def explain(engine, filt, **extra):
    return ok(engine, {"explain": {"find": "c", "filter": filt, **extra}, "verbosity": "executionStats"})


@pytest.fixture
def users(engine):
    docs = [{"_id": bson.ObjectId(), "name": f"u{i:02}", "email": f"u{i:02}@x.org", "age": i, "tags": ["a"]}
            for i in range(40)]
    ok(engine, {"insert": "c", "documents": docs})
    ok(engine, {"createIndexes": "c", "indexes": [{"key": {"name": 1, "email": 1}, "name": "ne"},
                                                  {"key": {"age": 1}, "name": "age"},
                                                  {"key": {"tags": 1}, "name": "tags"}]})
    return docs


def test_covered_plan_reads_no_document(engine, users):
    e = explain(engine, {"name": {"$gte": "u30"}}, projection={"email": 1, "_id": 0}, sort={"name": -1})
    plan = e["queryPlanner"]["winningPlan"]
    assert plan["stage"] == "PROJECTION_COVERED" and plan["transformBy"] == {"email": 1, "_id": 0}
    assert plan["inputStage"]["stage"] == "IXSCAN" and plan["inputStage"]["indexName"] == "ne"
    stats = e["executionStats"]
    assert stats["nReturned"] == 10 and stats["totalDocsExamined"] == 0 and stats["totalKeysExamined"] == 10
    got = find(engine, {"name": {"$gte": "u30"}}, projection={"email": 1, "_id": 0}, sort={"name": -1})
    assert got == [{"email": f"u{i:02}@x.org"} for i in range(39, 29, -1)]
    # equality on the prefix, both fields returned
    e = explain(engine, {"name": "u05"}, projection={"name": 1, "email": 1, "_id": 0})
    assert e["queryPlanner"]["winningPlan"]["stage"] == "PROJECTION_COVERED"
    assert e["executionStats"]["totalDocsExamined"] == 0
    assert find(engine, {"name": "u05"}, projection={"name": 1, "email": 1, "_id": 0}) == [
        {"name": "u05", "email": "u05@x.org"}]


@pytest.mark.parametrize("filt,projection", [
    ({"name": "u05"}, {"name": 1, "email": 1}),            # _id is returned and not in the index
    ({"name": "u05"}, {"name": 1, "age": 1, "_id": 0}),    # age is not in the index
    ({"name": "u05", "age": 5}, {"name": 1, "_id": 0}),    # the filter reads a field beside the index
    ({"name": "u05"}, {"email": 0}),                       # an exclusion returns every other field
    ({"tags": "a"}, {"tags": 1, "_id": 0}),                # multikey: the key is one element
])
def test_not_covered_when_mongod_would_not_cover(engine, users, filt, projection):
    plan = explain(engine, filt, projection=projection)["queryPlanner"]["winningPlan"]
    assert plan["stage"] != "PROJECTION_COVERED"
    got = find(engine, filt, projection=projection)
    assert got == find(engine, filt, projection=projection, hint={"$natural": 1})


def test_values_a_key_cannot_type_are_read_from_the_document(engine, users):
    """Keys share one encoding for 5, Int64(5), 5.0 and Decimal128("5"), and for null and a
    missing field: those records are read, so the BSON types are the stored ones."""
    ok(engine, {"insert": "c", "documents": [{"_id": 100, "age": 5.0}, {"_id": 101, "age": bson.Int64(5)},
                                             {"_id": 102, "name": "zz"}]})
    e = explain(engine, {"age": 5}, projection={"age": 1, "_id": 0})
    assert e["queryPlanner"]["winningPlan"]["stage"] == "PROJECTION_COVERED"
    assert e["executionStats"]["totalDocsExamined"] == 3
    reply = ok(engine, {"find": "c", "filter": {"age": 5}, "projection": {"age": 1, "_id": 0}})
    types = sorted(type(bson.decode(d.raw)["age"]).__name__ for d in reply["cursor"]["firstBatch"])
    assert types == ["Int64", "float", "int"]
    # a missing email keys as null: the record is read and the field stays absent
    assert find(engine, {"name": "zz"}, projection={"name": 1, "email": 1, "_id": 0}) == [{"name": "zz"}]
