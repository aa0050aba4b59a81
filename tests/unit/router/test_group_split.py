"""The $group split: shard partials merged on the router give what one $group over all the
documents gives (the same query/pipeline code runs both)."""
from __future__ import annotations

import random

from bson.decimal128 import Decimal128

from ginkgodb.query.pipeline import run_pipeline
from ginkgodb.router.group_split import split_group


def _grouped(spec, docs, shards=3):
    partial, merge = split_group(spec)
    parts = [list(run_pipeline([{"$group": partial}], docs[i::shards])) for i in range(shards)]
    merged = list(run_pipeline(merge + [{"$sort": {"_id": 1}}], [d for p in parts for d in p]))
    whole = list(run_pipeline([{"$group": spec}, {"$sort": {"_id": 1}}], docs))
    return merged, whole


def test_split_groups_equal_one_group():
    rng = random.Random(5)
    docs = [{"g": rng.choice(["a", "b", "c", None]), "v": rng.choice([1, 2.5, "x", None, Decimal128("1.5"), 7]),
             "w": rng.randrange(100)} for _ in range(300)] + [{"g": "only-text", "v": "t"}]
    spec = {"_id": "$g", "total": {"$sum": "$v"}, "n": {"$count": {}}, "lo": {"$min": "$w"}, "hi": {"$max": "$v"},
            "mean": {"$avg": "$v"}, "ones": {"$sum": 1}}
    merged, whole = _grouped(spec, docs)
    assert merged == whole
    assert [list(d) for d in merged] == [list(d) for d in whole]   # field order kept
    assert next(d for d in merged if d["_id"] == "only-text")["mean"] is None


def test_order_dependent_or_collecting_accumulators_are_not_split():
    for acc in ({"$first": "$v"}, {"$push": "$v"}, {"$addToSet": "$v"}, {"$last": "$v"}):
        assert split_group({"_id": None, "x": acc}) is None
    assert split_group({"x": {"$sum": 1}}) is None
