"""planCacheClear, planCacheSetFilter, planCacheListFilters, planCacheClearFilters and
$planCacheStats: their arguments' errors, as mongod answers them, and missing collections."""
from __future__ import annotations

import pytest


@pytest.fixture
def coll(run):
    run.insert("c", {"k": 1})
    return "c"


@pytest.mark.parametrize("fields, message", [
    ({"indexes": ["k_1"]}, "required field query missing"),
    ({"query": 5, "indexes": ["k_1"]}, "required field query must be an object"),
    ({"query": {"k": 1}}, "required field indexes missing"),
    ({"query": {"k": 1}, "indexes": "k_1"}, "required field indexes must be an array"),
    ({"query": {"k": 1}, "indexes": []}, "indexes cannot be empty"),
    ({"query": {"k": 1}, "indexes": [5]}, "each item in indexes must be an object or string"),
    ({"query": {"k": 1}, "indexes": [{}]}, "each item in indexes must be an object or string"),
])
def test_set_filter_refuses_bad_arguments_and_sets_nothing(run, coll, fields, message):
    reply = run.error({"planCacheSetFilter": coll, **fields})
    assert (reply["code"], reply["codeName"], reply["errmsg"]) == (2, "BadValue", message)
    assert run({"planCacheListFilters": coll})["filters"] == []


def test_set_filter_on_a_missing_collection(run):
    reply = run.error({"planCacheSetFilter": "none", "query": {"k": 1}, "indexes": ["k_1"]})
    assert (reply["code"], reply["errmsg"]) == (2, "no such collection")


def test_list_clear_and_stats_on_a_missing_collection_answer_empty(run):
    assert run({"planCacheListFilters": "none"})["filters"] == []
    run({"planCacheClear": "none"})
    run({"planCacheClearFilters": "none"})
    stats = run({"aggregate": "none", "pipeline": [{"$planCacheStats": {}}], "cursor": {}})
    assert stats["cursor"]["firstBatch"] == []


@pytest.mark.parametrize("name", ["planCacheClear", "planCacheClearFilters"])
def test_a_shape_needs_its_query(run, coll, name):
    reply = run.error({name: coll, "sort": {"k": 1}})
    assert (reply["code"], reply["errmsg"]) == (2, "sort, projection and collation require a query")


def test_unknown_fields_are_refused(run, coll):
    reply = run.error({"planCacheClear": coll, "bogus": 1})
    assert reply["codeName"] == "IDLUnknownField"


@pytest.mark.parametrize("spec, message", [
    (1, "$planCacheStats value must be an object. Found: int"),
    ({"bogus": True}, "unrecognized option 'bogus' in $planCacheStats stage"),
])
def test_plan_cache_stats_refuses_bad_specs(run, coll, spec, message):
    reply = run.error({"aggregate": coll, "pipeline": [{"$planCacheStats": spec}], "cursor": {}})
    assert (reply["codeName"], reply["errmsg"]) == ("FailedToParse", message)


def test_plan_cache_stats_must_be_first(run, coll):
    reply = run.error({"aggregate": coll, "pipeline": [{"$match": {}}, {"$planCacheStats": {}}], "cursor": {}})
    assert (reply["code"], reply["errmsg"]) == (40602, "$planCacheStats is only valid as the first stage in a pipeline")
