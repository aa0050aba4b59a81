"""The plan cache (engine/plan_cache.py): a multi-planned query's winner is cached per query shape
and reused without a trial, emptied by index changes, replanned after the data drifted, and
index filters limit the plans, on both engines."""
from __future__ import annotations

import pytest
from support.runner import Runner

from ginkgodb.engine import plan_builder


@pytest.fixture
def run(engine):
    r = Runner(engine)
    r.insert("c", *[{"_id": i, "k": i % 100, "s": i % 50, "v": i} for i in range(1000)])
    for field in ("k", "s"):
        r({"createIndexes": "c", "indexes": [{"key": {field: 1}, "name": f"{field}_1"}]})
    return r


@pytest.fixture
def trials(monkeypatch):
    """How many times the multi-planner ran a trial."""
    calls = []
    real = plan_builder._trial

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)
    monkeypatch.setattr(plan_builder, "_trial", counted)
    return calls


def matching(k, s):
    return [i for i in range(1000) if i % 100 == k and i % 50 == s]


def cache(run, coll="c"):
    return run({"aggregate": coll, "pipeline": [{"$planCacheStats": {}}], "cursor": {}})["cursor"]["firstBatch"]


def cached_index(entry):
    return entry["cachedPlan"]["inputStage"]["indexName"]


def winning_index(run, filt, **kw):
    plan = run.explain("c", filt, **kw)["queryPlanner"]
    stage = plan["winningPlan"]
    while "inputStage" in stage:
        stage = stage["inputStage"]
    return stage.get("indexName", stage["stage"]), plan


def test_a_tied_query_is_cached_and_the_next_of_its_shape_takes_no_trial(run, trials):
    assert [d["_id"] for d in run.find("c", {"k": 3, "s": 3})] == matching(3, 3)
    assert len(trials) == 1
    [entry] = cache(run)
    assert cached_index(entry) == "k_1"            # 10 matches per k, 20 per s: k is the more productive
    assert entry["createdFromQuery"]["query"] == {"k": 3, "s": 3}
    assert entry["works"] > 0 and entry["isActive"] is True
    assert len(entry["candidatePlanScores"]) == 2
    assert [d["_id"] for d in run.find("c", {"k": 7, "s": 7})] == matching(7, 7)
    assert len(trials) == 1                         # another value, the same shape: the cached plan
    assert len(cache(run)) == 1
    run.find("c", {"k": {"$gt": 5}, "s": 3})         # another shape: planned (ranges rank below equality)
    run.find("c", {"s": 3, "k": 3})                  # field order is part of the shape, as mongod's
    assert len(trials) == 2 and len(cache(run)) == 2


def test_a_query_the_ranking_decides_alone_is_not_cached(run, trials):
    run.find("c", {"k": 3})
    run.find("c", {"_id": 3})
    run.find("c", {"v": {"$gt": 990}})
    assert trials == [] and cache(run) == []


def test_explain_uses_the_cache_but_does_not_fill_it(run, trials):
    winning_index(run, {"k": 3, "s": 3})
    assert len(trials) == 1 and cache(run) == []
    run.find("c", {"k": 3, "s": 3})
    winning_index(run, {"k": 4, "s": 4})
    assert len(trials) == 2   # the find's own trial; the explain after it took the cached plan


def test_an_index_built_or_dropped_empties_the_collections_cache(run):
    run.find("c", {"k": 3, "s": 3})
    assert len(cache(run)) == 1
    run({"createIndexes": "c", "indexes": [{"key": {"v": 1}, "name": "v_1"}]})
    assert cache(run) == []
    run.find("c", {"k": 3, "s": 3})
    assert len(cache(run)) == 1
    run({"dropIndexes": "c", "index": "v_1"})
    assert cache(run) == []


def test_a_plan_that_over_works_after_the_data_drifted_is_replanned(run, trials):
    run.find("c", {"k": 7, "s": 7})
    assert cached_index(cache(run)[0]) == "k_1"
    # k = 7 now matches 3,010 documents, s = 10,000 + j one each: the cached index no longer fits
    run.insert("c", *[{"_id": 10_000 + j, "k": 7, "s": 10_000 + j, "v": j} for j in range(3000)])
    assert [d["_id"] for d in run.find("c", {"k": 7, "s": 10_500})] == [10_500]   # cached k_1, ~3,000 keys
    assert len(trials) == 1
    assert [d["_id"] for d in run.find("c", {"k": 7, "s": 10_600})] == [10_600]   # evicted: planned again
    assert len(trials) == 2
    [entry] = cache(run)
    assert cached_index(entry) == "s_1" and entry["works"] < 10


def test_plan_cache_clear_drops_all_or_one_shape(run):
    run.find("c", {"k": 3, "s": 3})
    run.find("c", {"s": 3, "k": 3})
    assert len(cache(run)) == 2
    run({"planCacheClear": "c", "query": {"k": 99, "s": 99}})   # the shape, whatever the values
    assert [e["createdFromQuery"]["query"] for e in cache(run)] == [{"s": 3, "k": 3}]
    run({"planCacheClear": "c"})
    assert cache(run) == []


def test_an_index_filter_limits_the_plans_and_overrides_the_hint(run):
    assert winning_index(run, {"k": 3, "s": 3})[0] == "k_1"
    run({"planCacheSetFilter": "c", "query": {"k": 0, "s": 0}, "indexes": [{"s": 1}]})
    name, plan = winning_index(run, {"k": 3, "s": 3})
    assert name == "s_1" and plan["indexFilterSet"] is True
    assert winning_index(run, {"k": 3, "s": 3}, hint="k_1")[0] == "s_1"
    assert [d["_id"] for d in run.find("c", {"k": 3, "s": 3})] == matching(3, 3)
    name, plan = winning_index(run, {"k": 3})          # another shape: unaffected (the shortcut's k_1)
    assert name == "k_1" and plan["indexFilterSet"] is False
    run({"planCacheSetFilter": "c", "query": {"k": 0}, "indexes": ["v_1"]})   # no such index: no index
    assert winning_index(run, {"k": 3})[0] == "COLLSCAN"
    assert len(run.find("c", {"k": 3})) == 10
    filters = run({"planCacheListFilters": "c"})["filters"]
    assert filters == [{"query": {"k": 0, "s": 0}, "sort": {}, "projection": {}, "indexes": [{"s": 1}]},
                       {"query": {"k": 0}, "sort": {}, "projection": {}, "indexes": ["v_1"]}]


def _k_accesses(run):
    stats = run({"aggregate": "c", "pipeline": [{"$indexStats": {}}], "cursor": {}})["cursor"]["firstBatch"]
    return next(s["accesses"]["ops"] for s in stats if s["name"] == "k_1")


def test_an_index_filter_applies_to_the_targets_of_updates_and_deletes(run):
    run({"planCacheSetFilter": "c", "query": {"k": 0}, "indexes": ["s_1"]})   # s_1 cannot serve {k}: a scan
    before = _k_accesses(run)
    assert run({"update": "c", "updates": [{"q": {"k": 3}, "u": {"$set": {"v": -1}}}]})["nModified"] == 1
    assert run({"delete": "c", "deletes": [{"q": {"k": 4}, "limit": 1}]})["n"] == 1
    assert _k_accesses(run) == before
    run({"planCacheClearFilters": "c"})
    run({"update": "c", "updates": [{"q": {"k": 5}, "u": {"$set": {"v": -1}}}]})
    assert _k_accesses(run) == before + 1


def test_index_filters_survive_index_changes_and_are_cleared_by_shape(run):
    run({"planCacheSetFilter": "c", "query": {"k": 0, "s": 0}, "indexes": ["s_1"]})
    run({"planCacheSetFilter": "c", "query": {"k": 0}, "indexes": ["k_1"]})
    run({"createIndexes": "c", "indexes": [{"key": {"v": 1}, "name": "v_1"}]})
    assert len(run({"planCacheListFilters": "c"})["filters"]) == 2
    run({"planCacheClearFilters": "c", "query": {"k": 5}})
    assert [f["query"] for f in run({"planCacheListFilters": "c"})["filters"]] == [{"k": 0, "s": 0}]
    run({"planCacheClearFilters": "c"})
    assert run({"planCacheListFilters": "c"})["filters"] == []
    assert winning_index(run, {"k": 3, "s": 3})[1]["indexFilterSet"] is False


def test_explain_shows_the_shape_hash_and_plan_cache_key(run):
    one = winning_index(run, {"k": 3, "s": 3})[1]
    same = winning_index(run, {"k": 4, "s": 9})[1]
    other = winning_index(run, {"k": 3})[1]
    assert one["queryHash"] == same["queryHash"] == one["planCacheShapeHash"]
    assert len(one["queryHash"]) == 8 and one["queryHash"] != other["queryHash"]
    assert one["planCacheKey"] == same["planCacheKey"]
    run({"createIndexes": "c", "indexes": [{"key": {"v": 1}, "name": "v_1"}]})
    after = winning_index(run, {"k": 3, "s": 3})[1]
    assert after["queryHash"] == one["queryHash"] and after["planCacheKey"] != one["planCacheKey"]


def test_cache_entries_and_filters_belong_to_their_collection(run):
    run.insert("d", {"k": 1, "s": 1})
    for field in ("k", "s"):
        run({"createIndexes": "d", "indexes": [{"key": {field: 1}, "name": f"{field}_1"}]})
    run.find("c", {"k": 3, "s": 3})
    run({"planCacheSetFilter": "c", "query": {"k": 0}, "indexes": ["k_1"]})
    assert cache(run, "d") == [] and run({"planCacheListFilters": "d"})["filters"] == []
    run({"drop": "c"})
    run.insert("c", {"k": 1})
    assert cache(run) == [] and run({"planCacheListFilters": "c"})["filters"] == []
