"""A large $in costs O(k log k) to plan: each value is encoded once, the keys are sorted once, and
no interval set operation runs per value (this used to cost 30 us a value: 31.7 s for a million).
Counted, not timed."""
from __future__ import annotations

import random

import pytest
from bson.int64 import Int64

from ginkgodb.bsonutil import keycodec
from ginkgodb.planner import intervals as I
from ginkgodb.planner import translate
from ginkgodb.planner.bounds import compute_bounds

N = 20_000


@pytest.fixture
def counted(monkeypatch):
    """Counts of the per-value work: encodings, union merges, pairwise intersections."""
    counts = {"encode": 0, "touches": 0, "intersect_one": 0}

    def wrap(module, name, key):
        original = getattr(module, name)

        def counting(*args, **kw):
            counts[key] += 1
            return original(*args, **kw)
        monkeypatch.setattr(module, name, counting)

    wrap(translate, "encode_value", "encode")
    wrap(I, "_touches", "touches")
    wrap(I, "_intersect_one", "intersect_one")
    return counts


def test_in_encodes_each_value_once_and_merges_nothing(counted):
    values = list(range(N))
    random.Random(1).shuffle(values)
    bounds = compute_bounds([("a", 1)], {"a": {"$in": values + values[:100]}})
    assert counted["encode"] == N + 100
    assert counted["touches"] == 0  # no union: the sorted distinct keys are the intervals
    ivs = bounds.fields[0].intervals
    assert len(ivs) == N and all(iv.is_point() for iv in ivs)
    assert [iv.low.value for iv in ivs] == list(range(N))
    assert bounds.exact is False  # more points than ranges allowed: one hull range, re-checked
    assert len(bounds.key_ranges()) == 1


def test_equal_numbers_are_one_point_the_first_given(counted):
    bounds = compute_bounds([("a", 1)], {"a": {"$in": [2.0, 1, Int64(2), 1.0, 2]}})
    assert [iv.low.value for iv in bounds.fields[0].intervals] == [1, 2.0]
    assert bounds.to_explain() == {"a": ["[1, 1]", "[2.0, 2.0]"]}
    assert bounds.exact


def test_in_with_arrays_null_and_regexes_still_unions_those(counted):
    from bson.regex import Regex
    bounds = compute_bounds([("a", 1)], {"a": {"$in": [3, None, [1, 2], Regex("^x"), 1]}})
    assert bounds.to_explain() == {"a": ["[null, null]", "[1, 1]", "[3, 3]", '["x", "y")',
                                         "[[ 1, 2 ], [ 1, 2 ]]", "[/^x/, /^x/]"]}
    assert not bounds.exact


def test_two_large_ins_intersect_in_one_merge_pass(counted):
    evens = list(range(0, 2 * N, 2))
    threes = list(range(0, 2 * N, 3))
    bounds = compute_bounds([("a", 1)], {"$and": [{"a": {"$in": evens}}, {"a": {"$in": threes}}]})
    assert counted["intersect_one"] <= len(evens) + len(threes)
    assert [iv.low.value for iv in bounds.fields[0].intervals] == list(range(0, 2 * N, 6))


def test_large_nin_is_the_complement_of_the_points(counted):
    bounds = compute_bounds([("a", 1)], {"a": {"$nin": list(range(N))}})
    ivs = bounds.fields[0].intervals
    assert len(ivs) == N + 1 and counted["touches"] == 0
    assert ivs[0].to_explain() == "[MinKey, 0)" and ivs[-1].to_explain() == f"({N - 1}, MaxKey]"


def test_large_in_through_find_matches_exactly(engine):
    from support.runner import Runner
    run = Runner(engine)
    run.insert("c", *({"_id": i, "a": i} for i in range(100)))
    values = list(range(-5_000, 50_000, 7))
    expected = [i for i in range(100) if i in set(values)]
    assert [d["_id"] for d in run.find("c", {"_id": {"$in": values}})] == expected
    assert [d["_id"] for d in run.find("c", {"a": {"$in": values}})] == expected
    assert sorted(d["_id"] for d in run.find("c", {"_id": {"$nin": values}})) == \
        [i for i in range(100) if i not in set(values)]


def test_keycodec_order_is_what_the_points_are_sorted_by():
    values = [5, -1.5, "b", "a", 3, Int64(-7)]
    bounds = compute_bounds([("a", 1)], {"a": {"$in": values}})
    keys = [iv.low.key for iv in bounds.fields[0].intervals]
    assert keys == sorted(keycodec.encode_value(v) for v in values)
