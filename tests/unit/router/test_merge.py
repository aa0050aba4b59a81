"""Merging shard streams: sort-merge with mongod's order, skip and limit after the merge, and
the balancer's choice."""
from __future__ import annotations

import random

from ginkgodb.query.sort import compile_sort
from ginkgodb.router.balancer import plan_move
from ginkgodb.router.merge import merge_streams, shard_limit


def test_sorted_streams_merge_in_mongods_order_across_types():
    rng = random.Random(3)
    docs = [{"_id": i, "a": rng.choice([None, 1, 2.5, "x", "b", [3, 0], {"k": 1}])} for i in range(60)]
    spec = {"a": -1, "_id": 1}
    key = compile_sort(spec)
    shards = [key.sort(docs[i::3]) for i in range(3)]
    merged = list(merge_streams(shards, spec))
    assert merged == key.sort(docs)


def test_skip_and_limit_apply_after_the_merge():
    a = [{"v": i} for i in range(0, 20, 2)]
    b = [{"v": i} for i in range(1, 20, 2)]
    out = [d["v"] for d in merge_streams([a, b], {"v": 1}, skip=3, limit=4)]
    assert out == [3, 4, 5, 6]
    assert shard_limit(3, 4) == 7 and shard_limit(3, 0) == 0


def test_unsorted_streams_concatenate():
    assert [d["v"] for d in merge_streams([[{"v": 1}], [{"v": 0}]])] == [1, 0]


def test_the_balancer_moves_from_the_most_to_the_least_loaded_shard():
    assert plan_move({"s0": 4, "s1": 1}, ["s0", "s1"]) == ("s0", "s1")
    assert plan_move({"s0": 2, "s1": 1}, ["s0", "s1"]) is None
    assert plan_move({"s0": 3}, ["s0", "s1", "s2"]) == ("s0", "s1")
    assert plan_move({"s0": 3}, ["s0"]) is None


def test_write_batches_are_cut_under_the_document_limit_keeping_client_indexes():
    from ginkgodb.router.crud import SUB_BATCH_BYTES, _sized
    doc = {"p": "x" * (1024 * 1024)}   # about 1 MB each
    items = [dict(doc, _id=i) for i in range(30)]
    pieces = list(_sized([("s0", items, list(range(100, 130)))]))
    assert len(pieces) >= 3
    assert all(sum(len(str(d["p"])) for d in part) < SUB_BATCH_BYTES for _, part, _ in pieces)
    assert [i for _, _, idx in pieces for i in idx] == list(range(100, 130))
    assert list(_sized([("s1", [{"_id": 1}], [7])])) == [("s1", [{"_id": 1}], [7])]
