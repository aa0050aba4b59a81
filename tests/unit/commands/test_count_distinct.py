"""count and distinct: parameters and replies."""
from __future__ import annotations


def test_count_and_distinct(run):
    run.insert("c", {"a": [1, 2]}, {"a": 2}, {"a": "x"}, {"b": 1})
    assert run({"count": "c"})["n"] == 4
    assert run({"count": "c", "query": {"a": 2}})["n"] == 2
    assert sorted(run({"distinct": "c", "key": "a"})["values"], key=str) == [1, 2, "x"]


def test_count_applies_skip_and_the_absolute_limit(run):
    run.insert("c", *({"_id": i, "a": i % 2} for i in range(6)))
    assert run({"count": "c", "query": {"a": 0}, "skip": 1}) == {"n": 2, "ok": 1.0}
    assert run({"count": "c", "limit": -2})["n"] == 2  # a negative limit counts as its absolute value


def test_count_of_a_missing_collection_is_zero(run):
    assert run({"count": "nope"}) == {"n": 0, "ok": 1.0}


def test_count_parameters(run):
    err = run.error({"count": "c", "query": 1})
    assert (err["code"], err["errmsg"]) == (14, "BSON field 'count.query' is the wrong type 'int', expected type 'object'")
    assert run.error({"count": "c", "bogus": 1})["code"] == 40415


def test_distinct_with_a_query_and_on_a_missing_collection(run):
    run.insert("c", {"a": 1}, {"a": 2}, {"a": [2, 3]})
    assert run({"distinct": "c", "key": "a", "query": {"a": {"$lt": 3}}}) == {"values": [1, 2, 3], "ok": 1.0}
    assert run({"distinct": "nope", "key": "a"}) == {"values": [], "ok": 1.0}


def test_distinct_parameters(run):
    err = run.error({"distinct": "c"})
    assert (err["code"], err["errmsg"]) == (40414, "BSON field 'distinct.key' is missing but a required field")
    err = run.error({"distinct": "c", "key": 1})
    assert (err["code"], err["errmsg"]) == (14, "BSON field 'distinct.key' is the wrong type 'int', expected type 'string'")
