"""Collations: case- and accent-insensitive matching, language order, numeric ordering."""
from __future__ import annotations

import pytest
from support.runner import Runner

from ginkgodb.bsonutil.collation import from_spec


@pytest.fixture
def run(engine):
    r = Runner(engine)
    r.insert("c", {"_id": 1, "x": "ping"}, {"_id": 2, "x": "PING"}, {"_id": 3, "x": "Péng"},
             {"_id": 4, "x": "pong"}, {"_id": 5, "x": "item10"}, {"_id": 6, "x": "item9"})
    return r


def test_strength_two_ignores_case_but_not_accents(run):
    ci = {"locale": "en_US", "strength": 2}
    assert [d["_id"] for d in run.find("c", {"x": "Ping"}, collation=ci)] == [1, 2]
    assert run.find("c", {"x": "peng"}, collation=ci) == []
    assert [d["_id"] for d in run.find("c", {"x": "peng"}, collation={"locale": "fr", "strength": 1})] == [3]
    assert run({"count": "c", "query": {"x": "PING"}, "collation": ci})["n"] == 2
    assert run({"distinct": "c", "key": "x", "query": {"_id": {"$lte": 2}}, "collation": ci})["values"] == ["ping"]


def test_default_strength_orders_lowercase_first_and_letters_alphabetically(run):
    docs = run.find("c", {"_id": {"$lte": 4}}, sort={"x": 1}, collation={"locale": "en"})
    assert [d["x"] for d in docs] == ["Péng", "ping", "PING", "pong"]
    simple = run.find("c", {"_id": {"$lte": 4}}, sort={"x": 1})
    assert [d["x"] for d in simple] == ["PING", "Péng", "ping", "pong"]


def test_numeric_ordering(run):
    docs = run.find("c", {"x": {"$regex": "^item"}}, sort={"x": 1}, collation={"locale": "en", "numericOrdering": True})
    assert [d["x"] for d in docs] == ["item9", "item10"]


def test_updates_and_deletes_honour_the_collation(run):
    ci = {"locale": "en", "strength": 2}
    reply = run({"update": "c", "updates": [{"q": {"x": "PiNg"}, "u": {"$set": {"seen": True}}, "multi": True,
                                              "collation": ci}]})
    assert reply["nModified"] == 2
    assert run({"delete": "c", "deletes": [{"q": {"x": "PONG"}, "limit": 0, "collation": ci}]})["n"] == 1


def test_index_with_a_collation_serves_queries_with_the_same_collation(run):
    ci = {"locale": "en", "strength": 2}
    run({"createIndexes": "c", "indexes": [{"key": {"x": 1}, "name": "x_ci", "collation": ci}]})
    explain = run({"explain": {"find": "c", "filter": {"x": "PING"}, "collation": ci}, "verbosity": "executionStats"})
    assert explain["queryPlanner"]["winningPlan"]["inputStage"]["indexName"] == "x_ci"
    assert explain["executionStats"]["nReturned"] == 2
    plain = run.explain("c", {"x": "PING"})
    assert plain["queryPlanner"]["winningPlan"]["stage"] == "COLLSCAN"  # simple collation: not that index
    assert [d["_id"] for d in run.find("c", {"x": "PING"})] == [2]


def test_collection_default_collation(run):
    run({"create": "ci", "collation": {"locale": "en", "strength": 2}})
    run.insert("ci", {"x": "Apple"}, {"x": "apple"}, {"x": "banana"})
    assert len(run.find("ci", {"x": "APPLE"})) == 2
    assert len(run.find("ci", {"x": "APPLE"}, collation={"locale": "simple"})) == 0


def test_bad_collations_are_refused():
    from ginkgodb.errors import CommandError
    for spec, code in [({"strength": 2}, 40414), ({"locale": "en", "strength": 9}, 2),
                       ({"locale": "en", "bogus": 1}, 40415), ({"locale": "simple", "strength": 1}, 2)]:
        with pytest.raises(CommandError) as err:
            from_spec(spec)
        assert err.value.code == code
    assert from_spec({"locale": "simple"}) is None
