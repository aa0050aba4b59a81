"""Targeting: equality and ranges on the shard key pick the owning chunks; anything else
broadcasts (None). It must never miss a chunk that can hold a match."""
from __future__ import annotations

import random

from bson.objectid import ObjectId
from bson.regex import Regex
from bson.timestamp import Timestamp

from ginkgodb.query.match import compile_filter
from ginkgodb.router.chunks import ChunkMap, initial_chunks
from ginkgodb.router.shardkey import ShardKey
from ginkgodb.router.targeting import full_key_equality, shards_of, target


def _range_map() -> ChunkMap:
    key = ShardKey({"a": 1})
    cmap = ChunkMap("t.c", key, ObjectId(), Timestamp(1, 1), initial_chunks(key, ["s0"], "s0"))
    cmap = cmap.split([{"a": 10}, {"a": 20}, {"a": 30}])
    return cmap.move(cmap.chunks[2], "s1")   # [20, 30) on s1


def _mins(chunks):
    return [c.min["a"] for c in chunks]


def test_equality_targets_one_chunk():
    cmap = _range_map()
    assert _mins(target({"a": 25}, cmap)) == [20]
    assert _mins(target({"a": {"$eq": 5}, "b": 1}, cmap))[0].__class__.__name__ == "MinKey"
    assert shards_of(target({"a": 25}, cmap), cmap) == ["s1"]
    assert _mins(target({"$and": [{"a": 12}, {"b": 2}]}, cmap)) == [10]


def test_in_targets_each_value():
    cmap = _range_map()
    assert _mins(target({"a": {"$in": [11, 25]}}, cmap)) == [10, 20]


def test_ranges_target_the_overlapping_chunks():
    cmap = _range_map()
    assert _mins(target({"a": {"$gte": 12, "$lt": 22}}, cmap)) == [10, 20]
    assert _mins(target({"a": {"$gt": 25}}, cmap)) == [20, 30]


def test_what_it_cannot_reason_about_broadcasts():
    cmap = _range_map()
    for f in ({}, None, {"b": 1}, {"$or": [{"a": 1}, {"a": 25}]}, {"a": Regex("^x")}, {"a": {"$ne": 3}},
              {"a": [1, 2]}):
        assert target(f, cmap) is None, f


def test_hashed_keys_target_equality_only():
    key = ShardKey({"x": "hashed"})
    cmap = ChunkMap("t.h", key, ObjectId(), Timestamp(1, 1), initial_chunks(key, ["s0", "s1"], "s0", 8))
    one = target({"x": 42}, cmap)
    assert one is not None and len(one) == 1
    assert one[0] == cmap.chunk_for(key.key_of({"x": 42}))
    assert target({"x": {"$gt": 3}}, cmap) is None


def test_hashed_targeting_by_integer_bounds_agrees_with_the_key_codec():
    """The hash bisected among the chunks' integer bounds picks the chunk key_of's bytes pick,
    for every kind of value, including after splits at arbitrary hashes."""
    key = ShardKey({"x": "hashed"})
    cmap = ChunkMap("t.h", key, ObjectId(), Timestamp(1, 1), initial_chunks(key, ["s0", "s1"], "s0", 8))
    rng = random.Random(11)
    cmap = cmap.split([{"x": rng.randrange(-2**63, 2**63)} for _ in range(5)])
    values = [0, 1, -1, 2**62, 1.5, "a", "", None, True, ObjectId(), Timestamp(2, 3), {"k": 1}] + \
        [rng.randrange(-10**12, 10**12) for _ in range(300)]
    for v in values:
        assert target({"x": v}, cmap) == [cmap.chunk_for(key.key_of({"x": v}))], v
    assert len(target({"x": {"$in": values[:40]}}, cmap)) == len({id(cmap.chunk_for(key.key_of({"x": v})))
                                                                  for v in values[:40]})


def test_full_key_equality():
    key = ShardKey({"a": 1, "_id": 1})
    cmap = ChunkMap("t.k", key, ObjectId(), Timestamp(1, 1), initial_chunks(key, ["s0"], "s0"))
    assert full_key_equality({"a": 1, "_id": 2}, cmap)
    assert not full_key_equality({"a": 1}, cmap)
    assert not full_key_equality({"a": {"$in": [1, 2]}, "_id": 2}, cmap)


def test_targeting_never_misses_a_matching_document():
    """Random documents and filters: every matching document lies in a targeted chunk."""
    rng = random.Random(7)
    cmap = _range_map()
    values = [None, 0, 5, 9.5, 10, 15, 20, 29, 30, 45, "s", True]
    docs = [{"a": rng.choice(values)} for _ in range(200)] + [{}]
    ops = ["$gt", "$gte", "$lt", "$lte", "$eq"]
    for _ in range(300):
        n = rng.randrange(1, 3)
        cond = {rng.choice(ops): rng.choice(values) for _ in range(n)}
        filt = {"a": cond} if rng.random() < 0.8 else {"a": {"$in": rng.sample(values, 3)}}
        chunks = target(filt, cmap)
        matcher = compile_filter(filt)
        for d in docs:
            if matcher(d) and chunks is not None:
                owner = cmap.chunk_for(cmap.key.key_of(d))
                assert owner in chunks, (filt, d)
