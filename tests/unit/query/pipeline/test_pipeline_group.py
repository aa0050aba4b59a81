"""$group and the stages built on it: accumulators, keys, $sortByCount, $bucket, $bucketAuto."""
import pytest
from bson.int64 import Int64
from pipekit import code_of, run

DOCS = [{"_id": 1, "k": "a", "v": 1}, {"_id": 2, "k": "b", "v": 2.5},
        {"_id": 3, "k": "a", "v": 3}, {"_id": 4, "v": None}, {"_id": 5, "k": None, "v": "x"}]


def by_id(docs):
    return {repr(d["_id"]): d for d in docs}


def test_group_sums_counts_and_averages():
    out = by_id(run([{"$group": {"_id": "$k", "s": {"$sum": "$v"}, "n": {"$sum": 1},
                                 "avg": {"$avg": "$v"}, "c": {"$count": {}}}}], DOCS))
    assert out["'a'"] == {"_id": "a", "s": 4, "n": 2, "avg": 2.0, "c": 2}
    assert out["None"]["n"] == 2 and out["None"]["avg"] is None


def test_missing_and_null_keys_group_together():
    out = run([{"$group": {"_id": "$k"}}], DOCS)
    assert sorted(map(repr, (d["_id"] for d in out))) == ["'a'", "'b'", "None"]


def test_numeric_keys_of_different_width_are_one_group():
    docs = [{"k": 1}, {"k": 1.0}, {"k": Int64(1)}]
    assert len(run([{"$group": {"_id": "$k", "n": {"$sum": 1}}}], docs)) == 1


def test_document_keys():
    out = run([{"$group": {"_id": {"k": "$k", "t": {"$type": "$v"}}, "n": {"$sum": 1}}}], DOCS)
    assert {"_id": {"k": "a", "t": "int"}, "n": 2} in out
    assert {"_id": {"t": "null"}, "n": 1} in out


def test_first_last_push_add_to_set_min_max():
    out = by_id(run([{"$group": {"_id": "$k", "f": {"$first": "$v"}, "l": {"$last": "$v"},
                                 "p": {"$push": "$v"}, "s": {"$addToSet": "$k"},
                                 "mn": {"$min": "$v"}, "mx": {"$max": "$v"}}}], DOCS))
    assert out["'a'"] == {"_id": "a", "f": 1, "l": 3, "p": [1, 3], "s": ["a"], "mn": 1, "mx": 3}
    assert out["None"]["p"] == [None, "x"] and out["None"]["s"] == [None]


def test_merge_objects_and_std_dev():
    docs = [{"g": 1, "o": {"a": 1}, "v": 2}, {"g": 1, "o": {"b": 2}, "v": 4}]
    out = run([{"$group": {"_id": "$g", "o": {"$mergeObjects": "$o"},
                           "sd": {"$stdDevPop": "$v"}}}], docs)
    assert out == [{"_id": 1, "o": {"a": 1, "b": 2}, "sd": 1.0}]


def test_n_accumulators_and_top_bottom():
    docs = [{"g": 1, "v": v} for v in (5, 1, 4, 2)]
    out = run([{"$group": {"_id": "$g", "f": {"$firstN": {"input": "$v", "n": 2}},
                           "l": {"$lastN": {"input": "$v", "n": 2}},
                           "mx": {"$maxN": {"input": "$v", "n": 2}},
                           "mn": {"$minN": {"input": "$v", "n": 2}},
                           "t": {"$top": {"sortBy": {"v": 1}, "output": "$v"}},
                           "bn": {"$bottomN": {"sortBy": {"v": 1}, "output": "$v", "n": 2}}}}],
              docs)
    assert out == [{"_id": 1, "f": [5, 1], "l": [4, 2], "mx": [5, 4], "mn": [1, 2], "t": 1,
                    "bn": [4, 5]}]


@pytest.mark.parametrize("spec,code", [
    ({"n": {"$sum": 1}}, 15955), ({"_id": 1, "n": 1}, 40234), ({"_id": 1, "n": {"$foo": 1}}, 15952),
    ({"_id": 1, "a.b": {"$sum": 1}}, 40235), ({"_id": 1, "n": {"$sum": [1, 2]}}, 40237),
    ({"_id": 1, "n": {"$sum": 1, "$avg": 1}}, 40238),
])
def test_group_spec_errors(spec, code):
    assert code_of([{"$group": spec}]) == code


def test_sort_by_count():
    out = run([{"$sortByCount": "$k"}], DOCS)
    assert out[0] == {"_id": "a", "count": 2}


def test_bucket_assigns_ranges_and_default():
    docs = [{"v": v} for v in (1, 5, 12, 30)]
    out = run([{"$bucket": {"groupBy": "$v", "boundaries": [0, 10, 20], "default": "other"}}],
              docs)
    assert out == [{"_id": 0, "count": 2}, {"_id": 10, "count": 1},
                   {"_id": "other", "count": 1}]
    assert code_of([{"$bucket": {"groupBy": "$v", "boundaries": [0, 10]}}], docs) == 40066
    assert code_of([{"$bucket": {"groupBy": "$v", "boundaries": [10, 0]}}]) == 40194


def test_bucket_auto_balances_buckets():
    docs = [{"v": v} for v in range(10)]
    out = run([{"$bucketAuto": {"groupBy": "$v", "buckets": 3}}], docs)
    assert [d["count"] for d in out] == [3, 3, 4]
    assert out[0]["_id"] == {"min": 0, "max": 3} and out[-1]["_id"] == {"min": 6, "max": 9}
