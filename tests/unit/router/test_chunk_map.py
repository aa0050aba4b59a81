"""The chunk map: lookups by key bytes, splits raise the minor, migrations the major, shard
versions, the storage form, hashed presplitting (docs/design/sharding.md)."""
from __future__ import annotations

import pytest
from bson.int64 import Int64
from bson.max_key import MaxKey
from bson.min_key import MinKey
from bson.objectid import ObjectId
from bson.timestamp import Timestamp

from ginkgodb.bsonutil.keyhash import hash_value
from ginkgodb.errors import CommandError
from ginkgodb.router.chunks import ChunkMap, initial_chunks
from ginkgodb.router.shardkey import ShardKey


def _map(pattern=None, shards=("s0", "s1"), num=0) -> ChunkMap:
    key = ShardKey(pattern or {"a": 1})
    return ChunkMap("t.c", key, ObjectId(), Timestamp(1, 1), initial_chunks(key, list(shards), shards[0], num))


def test_a_range_key_starts_as_one_chunk_on_the_primary():
    cmap = _map()
    assert len(cmap.chunks) == 1 and cmap.chunks[0].shard == "s0"
    assert cmap.chunks[0].min == {"a": MinKey()} and cmap.chunks[0].max == {"a": MaxKey()}
    assert cmap.version == (1, 0) and cmap.shard_version("s1") == (0, 0)


def test_split_raises_the_minor_and_lookups_find_the_owning_chunk():
    cmap = _map().split([{"a": 10}, {"a": 20}])
    assert [c.min["a"] for c in cmap.chunks][1:] == [10, 20]
    assert cmap.version == (1, 4)
    key = cmap.key
    assert cmap.chunk_for(key.key_of({"a": 5})).max == {"a": 10}
    assert cmap.chunk_for(key.key_of({"a": 10})).min == {"a": 10}      # minimum inclusive
    assert cmap.chunk_for(key.key_of({"a": "text"})).min == {"a": 20}  # strings sort above numbers
    assert cmap.chunk_for(key.key_of({})).min["a"] == MinKey()       # missing: the chunk of null


def test_split_outside_a_chunk_interior_is_refused():
    cmap = _map().split([{"a": 10}])
    with pytest.raises(CommandError):
        cmap.split([{"a": 10}])


def test_move_raises_the_major_for_the_recipient_and_the_donor():
    cmap = _map().split([{"a": 10}])
    moved = cmap.move(cmap.chunks[1], "s1")
    assert moved.chunks[1].shard == "s1" and moved.chunks[1].version == (2, 0)
    assert moved.shard_version("s0") == (2, 1) and moved.shard_version("s1") == (2, 0)
    assert moved.counts() == {"s0": 1, "s1": 1}


def test_the_storage_form_round_trips():
    cmap = _map({"a": 1, "_id": 1}).split([{"a": 5, "_id": MinKey()}])
    again = ChunkMap.from_doc(cmap.ns, cmap.key, cmap.to_doc())
    assert [(c.min, c.max, c.shard, c.version) for c in again.chunks] == \
        [(c.min, c.max, c.shard, c.version) for c in cmap.chunks]


def test_gaps_are_refused():
    cmap = _map().split([{"a": 10}])
    doc = cmap.to_doc()
    doc["chunks"][1]["min"] = {"a": 11}
    with pytest.raises(ValueError):
        ChunkMap.from_doc(cmap.ns, cmap.key, doc)


def test_hashed_presplit_spreads_ranges_round_robin_and_routes_by_mongods_hash():
    cmap = _map({"x": "hashed"}, num=4)
    assert [c.shard for c in cmap.chunks] == ["s0", "s1", "s0", "s1"]
    assert cmap.chunks[1].min == {"x": Int64(-(1 << 62))} and cmap.chunks[2].min == {"x": Int64(0)}
    h = hash_value(7)
    owner = cmap.chunk_for(cmap.key.key_of({"x": 7}))
    low = owner.min["x"]
    assert isinstance(low, MinKey) or int(low) <= h


def test_compound_key_and_array_values():
    key = ShardKey({"a": 1, "_id": 1})
    assert key.values({"a": 3, "_id": 9}) == [3, 9]
    assert key.values({"_id": 9}) == [None, 9]
    with pytest.raises(CommandError) as err:
        key.values({"a": [1, 2], "_id": 1})
    assert err.value.code == 61


@pytest.mark.parametrize("pattern", [{"a": -1}, {"a": "hashed", "b": "hashed"}, {}, {"a": "text"}])
def test_bad_patterns_are_refused(pattern):
    with pytest.raises(CommandError) as err:
        ShardKey(pattern)
    assert err.value.code == 2
