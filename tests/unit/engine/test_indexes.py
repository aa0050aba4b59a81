"""Index kinds, index builds and their maintenance, on both engines."""
from __future__ import annotations

import pytest
from support.runner import Runner


@pytest.fixture
def run(engine):
    return Runner(engine)


def create(run, coll, key, name=None, **options):
    return run.raw({"createIndexes": coll, "indexes": [{"key": key, "name": name or "_".join(
        f"{k}_{v}" for k, v in key.items()), **options}]})


def test_unique_index_rejects_duplicates_with_key_pattern_and_value(run):
    assert create(run, "c", {"email": 1}, unique=True)["ok"] == 1.0
    run.insert("c", {"email": "a@x"})
    err = run.insert("c", {"email": "a@x"})["writeErrors"][0]
    assert err["code"] == 11000
    assert err["errmsg"] == ('E11000 duplicate key error collection: test.c index: email_1 dup key: '
                             '{ email: "a@x" }')
    assert err["keyPattern"] == {"email": 1} and err["keyValue"] == {"email": "a@x"}


@pytest.mark.parametrize("value,shown", [
    ("10", "10"), ("10.0", "10"), ("1E+3", "1000"), ("0.5", "0.5"), ("-2.25", "-2.25"),
    ("0.1", 'NumberDecimal("0.1")'), ("Infinity", "inf.0"),
])
def test_duplicate_key_message_prints_a_decimal_as_the_number_it_holds(run, value, shown):
    from bson.decimal128 import Decimal128
    create(run, "c", {"pet.weight": 1}, unique=True)
    run.insert("c", {"pet": {"weight": Decimal128(value)}})
    err = run.insert("c", {"pet": {"weight": Decimal128(value)}})["writeErrors"][0]
    assert err["errmsg"] == ("E11000 duplicate key error collection: test.c index: pet.weight_1 dup key: "
                             f"{{ pet.weight: {shown} }}")
    assert err["keyValue"] == {"pet.weight": Decimal128(value)}


def test_unique_index_treats_missing_as_null(run):
    create(run, "c", {"k": 1}, unique=True)
    run.insert("c", {"_id": 1})
    assert run.insert("c", {"_id": 2})["writeErrors"][0]["code"] == 11000


def test_unique_sparse_index_allows_many_missing(run):
    create(run, "c", {"k": 1}, unique=True, sparse=True)
    assert run.insert("c", {"_id": 1}, {"_id": 2}, {"_id": 3, "k": 1})["n"] == 3
    assert run.insert("c", {"_id": 4, "k": 1})["writeErrors"][0]["code"] == 11000


def test_partial_unique_index_only_constrains_matching_documents(run):
    create(run, "c", {"u": 1}, unique=True, partialFilterExpression={"active": True})
    assert run.insert("c", {"u": 1, "active": False}, {"u": 1, "active": False}, {"u": 1, "active": True})["n"] == 3
    assert run.insert("c", {"u": 1, "active": True})["writeErrors"][0]["code"] == 11000


def test_building_a_unique_index_over_duplicates_fails_and_leaves_nothing(run):
    run.insert("c", {"a": 1}, {"a": 1})
    err = create(run, "c", {"a": 1}, unique=True)
    assert err["ok"] == 0.0 and err["code"] == 11000
    names = [ix["name"] for ix in run({"listIndexes": "c"})["cursor"]["firstBatch"]]
    assert names == ["_id_"]
    assert run.insert("c", {"a": 1})["n"] == 1


def test_index_build_over_existing_data_is_used_by_queries(run):
    run.insert("c", *({"_id": i, "n": i} for i in range(50)))
    create(run, "c", {"n": 1})
    explain = run.explain("c", {"n": {"$gte": 10, "$lt": 13}})
    stage = explain["queryPlanner"]["winningPlan"]
    assert stage["stage"] == "FETCH" and stage["inputStage"]["stage"] == "IXSCAN"
    assert stage["inputStage"]["indexBounds"] == {"n": ["[10, 13)"]}
    stats = explain["executionStats"]
    assert stats["nReturned"] == 3 and stats["totalKeysExamined"] == 3 and stats["totalDocsExamined"] == 3


def test_updates_and_deletes_maintain_every_index(run):
    create(run, "c", {"a": 1})
    run.insert("c", {"_id": 1, "a": 1})
    run({"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$set": {"a": 2}}}]})
    assert run.find("c", {"a": 1}, hint="a_1") == []
    assert run.find("c", {"a": 2}, hint="a_1") == [{"_id": 1, "a": 2}]
    run({"delete": "c", "deletes": [{"q": {"_id": 1}, "limit": 1}]})
    assert run.find("c", {"a": {"$gte": 0}}, hint="a_1") == []


def test_multikey_index_and_parallel_arrays(run):
    create(run, "c", {"a": 1, "b": 1})
    run.insert("c", {"_id": 1, "a": [1, 2], "b": 3})
    err = run.insert("c", {"_id": 2, "a": [1], "b": [2]})["writeErrors"][0]
    assert err["code"] == 171 and err["errmsg"] == "cannot index parallel arrays [b] [a]"
    ix = run.explain("c", {"a": 2})["queryPlanner"]["winningPlan"]["inputStage"]
    assert ix["isMultiKey"] is True and ix["multiKeyPaths"]["a"] == ["a"]
    assert run.find("c", {"a": 2}) == [{"_id": 1, "a": [1, 2], "b": 3}]


def test_compound_index_with_mixed_directions_provides_sort(run):
    create(run, "c", {"a": 1, "b": -1})
    run.insert("c", *({"_id": i, "a": i % 3, "b": i} for i in range(12)))
    explain = run.explain("c", {"a": 1}, sort={"b": -1})
    plan = explain["queryPlanner"]["winningPlan"]
    assert plan["stage"] == "FETCH" and plan["inputStage"]["indexBounds"] == {"a": ["[1, 1]"], "b": ["[MaxKey, MinKey]"]}
    assert [d["b"] for d in run.find("c", {"a": 1}, sort={"b": -1})] == [10, 7, 4, 1]
    assert [d["b"] for d in run.find("c", {"a": 1}, sort={"b": 1})] == [1, 4, 7, 10]


def test_hashed_index_answers_equality(run):
    create(run, "c", {"h": "hashed"}, name="h_hashed")
    run.insert("c", *({"_id": i, "h": f"v{i}"} for i in range(20)))
    plan = run.explain("c", {"h": "v7"})["queryPlanner"]["winningPlan"]
    assert plan["inputStage"]["indexName"] == "h_hashed"
    assert run.find("c", {"h": "v7"}) == [{"_id": 7, "h": "v7"}]


def test_prefix_regex_uses_index_bounds(run):
    create(run, "categories", {"path": 1})
    run.insert("categories", {"_id": "MongoDB", "path": ",Books,Programming,Databases,"},
               {"_id": "Python", "path": ",Books,Programming,Languages,"}, {"_id": "Cooking", "path": ",Books,"})
    explain = run.explain("categories", {"path": {"$regex": "^,Books,Programming,"}})
    ix = explain["queryPlanner"]["winningPlan"]["inputStage"]
    assert ix["stage"] == "IXSCAN"
    assert ix["indexBounds"]["path"] == ['[",Books,Programming,", ",Books,Programming-")',
                                         "[/^,Books,Programming,/, /^,Books,Programming,/]"]
    assert explain["executionStats"]["nReturned"] == 2


def test_or_of_indexed_branches_becomes_an_or_plan(run):
    create(run, "c", {"a": 1})
    create(run, "c", {"b": 1})
    run.insert("c", *({"_id": i, "a": i, "b": -i} for i in range(30)))
    explain = run.explain("c", {"$or": [{"a": 3}, {"b": -5}]})
    plan = explain["queryPlanner"]["winningPlan"]
    assert plan["stage"] == "FETCH" and plan["inputStage"]["stage"] == "OR"
    assert sorted(d["_id"] for d in run.find("c", {"$or": [{"a": 3}, {"b": -5}]})) == [3, 5]


def test_rejected_plans_are_reported(run):
    create(run, "c", {"a": 1})
    create(run, "c", {"a": 1, "b": 1})
    run.insert("c", *({"a": i, "b": i} for i in range(10)))
    qp = run.explain("c", {"a": 5, "b": 5})["queryPlanner"]
    assert qp["winningPlan"]["inputStage"]["indexName"] == "a_1_b_1"
    assert [p["inputStage"]["indexName"] for p in qp["rejectedPlans"]] == ["a_1"]


def test_trial_run_picks_the_more_selective_of_two_equally_ranked_indexes(run):
    create(run, "c", {"a": 1})
    create(run, "c", {"b": 1})
    run.insert("c", *({"_id": i, "a": i % 2, "b": i} for i in range(400)))  # a: 200 per value, b: unique
    qp = run.explain("c", {"a": 1, "b": 7})["queryPlanner"]
    assert qp["winningPlan"]["inputStage"]["indexName"] == "b_1"
    assert [p["inputStage"]["indexName"] for p in qp["rejectedPlans"]] == ["a_1"]
    qp = run.explain("c", {"b": 7, "a": 1})["queryPlanner"]
    assert qp["winningPlan"]["inputStage"]["indexName"] == "b_1"
    assert run.find("c", {"a": 1, "b": 7}) == [{"_id": 7, "a": 1, "b": 7}]


def test_queries_pick_the_selective_index_without_explain_too(run, engine):
    create(run, "c", {"a": 1})
    create(run, "c", {"b": 1})
    run.insert("c", *({"_id": i, "a": i % 2, "b": i} for i in range(400)))
    from ginkgodb.engine import plan_builder as Q
    state = engine.collection("test", "c")
    with engine.reader() as reader:
        built = Q.build(state, reader, Q.FindRequest(filter={"a": 1, "b": 7}))
        assert [r[0] for r in built.root.rows()] == [8]  # record ids start at 1
        assert built.root.child.index.meta.name == "b_1"


def test_ttl_index_expires_old_documents(run, engine):
    import datetime

    from ginkgodb.engine.ttl import expire_once
    create(run, "sessions", {"at": 1}, expireAfterSeconds=3600)
    now = datetime.datetime(2026, 1, 1, 12, 0)
    run.insert("sessions", {"_id": "old", "at": now - datetime.timedelta(hours=2)},
               {"_id": "new", "at": now - datetime.timedelta(minutes=5)},
               {"_id": "array", "at": [now, now - datetime.timedelta(days=1)]},
               {"_id": "nodate", "at": "yesterday"}, {"_id": "missing"})
    assert expire_once(engine, now) == 2
    assert sorted(d["_id"] for d in run.find("sessions")) == ["missing", "new", "nodate"]
    assert run.find("sessions", {"at": {"$lt": now}}, hint="at_1") == [
        {"_id": "new", "at": now - datetime.timedelta(minutes=5)}]


def test_paginating_over_an_index_skips_keys_before_fetching(run):
    create(run, "c", {"k": 1})
    run.insert("c", *({"_id": i, "k": (i * 7) % 50} for i in range(50)))
    page = run.find("c", {}, sort={"k": 1}, skip=20, limit=5)
    assert [d["k"] for d in page] == [20, 21, 22, 23, 24]
    stats = run.explain("c", {}, sort={"k": 1}, skip=20, limit=5)["executionStats"]
    assert stats["totalDocsExamined"] == 5 and stats["totalKeysExamined"] == 25
