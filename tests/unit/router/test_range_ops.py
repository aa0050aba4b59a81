"""Chunk merges, splitVector-style cuts by size, and the balancer's plan with draining shards
(docs/design/sharding.md, "Merging, moving ranges, splitting by size" and "Removing a shard")."""
from __future__ import annotations

import pytest
from bson.max_key import MaxKey
from bson.min_key import MinKey
from bson.objectid import ObjectId
from bson.timestamp import Timestamp

from ginkgodb.commands.split_points import range_end, range_start, split_points
from ginkgodb.errors import CommandError, ErrorCode
from ginkgodb.router.balancer import plan_collection
from ginkgodb.router.chunks import ChunkMap, initial_chunks, range_text
from ginkgodb.router.shardkey import ShardKey


def _map(points=(10, 20, 30, 40)) -> ChunkMap:
    key = ShardKey({"a": 1})
    cmap = ChunkMap("t.c", key, ObjectId(), Timestamp(1, 1), initial_chunks(key, ["s0", "s1"], "s0"))
    return cmap.split([{"a": p} for p in points])


def test_merge_joins_a_run_of_one_shards_chunks_with_the_next_minor():
    cmap = _map()
    merged = cmap.merge({"a": 10}, {"a": 40})
    assert [(c.min["a"], c.max["a"]) for c in merged.chunks][1:3] == [(10, 40), (40, MaxKey())]
    assert merged.chunks[1].version == (cmap.version[0], cmap.version[1] + 1)
    assert len(merged.chunks) == 3 and merged.version > cmap.version
    everything = merged.merge({"a": MinKey()}, {"a": MaxKey()})
    assert len(everything.chunks) == 1 and everything.chunks[0].shard == "s0"
    assert everything.merge({"a": MinKey()}, {"a": MaxKey()}) is everything   # one chunk: unchanged


@pytest.mark.parametrize("low,high", [(10, 25), (15, 30), (5, 30)])
def test_merge_refuses_bounds_that_are_not_chunk_boundaries(low, high):
    with pytest.raises(CommandError) as err:
        _map().merge({"a": low}, {"a": high})
    assert err.value.code == ErrorCode.IllegalOperation
    assert err.value.errmsg == ("could not merge chunks, shard s0 does not contain a sequence of chunks that "
                                 f"exactly fills the range [{{ a: {low} }}, {{ a: {high} }})")


def test_merge_refuses_a_run_spanning_two_shards():
    cmap = _map()
    moved = cmap.move(cmap.chunks[2], "s1")      # [20, 30) on s1
    with pytest.raises(CommandError) as err:
        moved.merge({"a": 10}, {"a": 40})
    assert err.value.code == ErrorCode.IllegalOperation
    assert moved.merge({"a": 30}, {"a": MaxKey()}).chunks[-1].min == {"a": 30}


def test_range_text_prints_as_mongod():
    assert range_text({"a": MinKey(), "b": "x"}, {"a": 5, "b": MaxKey()}) == \
        '[{ a: MinKey, b: "x" }, { a: 5, b: MaxKey })'


def _entries(keys, size=100):
    return [([k], size) for k in keys]


def test_split_points_cut_every_half_chunk_and_never_inside_one_key_value():
    assert split_points(_entries(range(10)), 1000) == []            # exactly the size: fits
    assert split_points(_entries(range(20)), 1000) == [[5], [10], [15]]
    # a run of one value is never cut: reached mid-way, the whole run starts the next chunk
    keys = [0, 1, 2, 3, 3, 3, 3, 3, 3, 4, 5, 6]
    assert split_points(_entries(keys), 1000) == [[3], [5]]
    assert split_points(_entries([0] * 8 + [1] * 8), 1000) == [[1]]
    assert split_points(_entries([7] * 30), 1000) == []               # one value above the size: jumbo


def test_range_end_and_start_find_where_a_range_reaches_the_size():
    assert range_end(_entries(range(20)), 1000) == [10]
    assert range_end(_entries(range(5)), 1000) is None
    assert range_end(_entries([0] * 12 + [1]), 1000) == [1]
    assert range_start(_entries(range(20)), 1000) == [10]
    assert range_start(_entries(range(5)), 1000) is None
    assert range_start(_entries([0, 1] + [2] * 12), 1000) == [2]


def test_the_balancer_drains_first_then_evens_counts():
    cmap = _map()                                  # five chunks on s0
    chunk, to = plan_collection(cmap, ["s0", "s1"], set())
    assert (chunk.min, to) == ({"a": MinKey()}, "s1")
    chunk, to = plan_collection(cmap, ["s1", "s2"], {"s0"})    # s0 draining: any count difference
    assert chunk.shard == "s0" and to == "s1"
    assert plan_collection(cmap, [], {"s0"}) is None
    jumbo = cmap
    for c in list(cmap.chunks):
        jumbo = jumbo.with_jumbo(c)
    assert plan_collection(jumbo, ["s1"], {"s0"}) is None          # jumbo chunks stay on a draining shard
    assert plan_collection(cmap.move(cmap.chunks[0], "s1").move(cmap.chunks[1], "s1"), ["s0", "s1"], set()) is None


def test_zone_bounds_split_chunks_and_the_balancer_moves_zone_chunks_to_zone_shards():
    from ginkgodb.router.zones import boundary_points, layout, zone_of
    cmap = _map(points=(10, 20))                    # [min,10) [10,20) [20,max) on s0
    ranges = [{"min": {"a": 15}, "max": {"a": 30}, "tag": "Z"}]
    docs = [{"_id": "s0"}, {"_id": "s1", "tags": ["Z"]}, {"_id": "s2", "tags": ["Z"]}]
    assert boundary_points(cmap, ranges) == [{"a": 15}, {"a": 30}]
    cmap = cmap.split(boundary_points(cmap, ranges))
    assert boundary_points(cmap, ranges) == []
    zones = layout(cmap, ranges, docs)
    assert zones[0].shards == {"s1", "s2"}
    inside = [c for c in cmap.chunks if zone_of(cmap, c, zones) is not None]
    assert [(c.min["a"], c.max["a"]) for c in inside] == [(15, 20), (20, 30)]
    chunk, to = plan_collection(cmap, ["s0", "s1", "s2"], set(), zones)
    assert (chunk.min, to) == ({"a": 15}, "s1")
    cmap = cmap.move(chunk, "s1")
    chunk, to = plan_collection(cmap, ["s0", "s1", "s2"], set(), zones)
    assert (chunk.min, to) == ({"a": 20}, "s2")     # the zone's least-loaded shard
    cmap = cmap.move(chunk, "s2")
    # outside the zone: three chunks on s0, none elsewhere -> evened over every shard
    chunk, to = plan_collection(cmap, ["s0", "s1", "s2"], set(), zones)
    assert chunk.shard == "s0" and zone_of(cmap, chunk, zones) is None and to == "s1"
    # a zone whose every shard is draining keeps its chunks where they are
    assert plan_collection(cmap, ["s0"], {"s1", "s2"}, zones) is None


def test_generated_shard_names_never_reuse_a_name_after_a_removal():
    from ginkgodb.router.admin import next_shard_name
    assert next_shard_name([]) == "shard0000"
    assert next_shard_name(["shard0001"]) == "shard0002"        # shard0000 was removed
    assert next_shard_name(["rs0", "shard0000", "shard0009"]) == "shard0010"


def test_zone_bounds_extend_a_prefix_with_min_key_and_refuse_other_fields():
    from ginkgodb.router.zones import _extend
    key = ShardKey({"a": 1, "b": 1})
    cmap = ChunkMap("t.c", key, ObjectId(), Timestamp(1, 1), initial_chunks(key, ["s0"], "s0"))
    assert _extend(cmap, {"a": 5}, "min") == {"a": 5, "b": MinKey()}
    assert _extend(cmap, {"a": 5, "b": 2}, "max") == {"a": 5, "b": 2}
    for bad in ({"b": 1}, {"b": 1, "a": 1}, {}, {"a": [1]}):
        with pytest.raises(CommandError) as err:
            _extend(cmap, bad, "min")
        assert err.value.code == ErrorCode.ShardKeyNotFound


def test_range_bounds_must_name_exactly_the_shard_key_fields():
    from ginkgodb.router.range_ops import _bound
    cmap = _map()
    assert _bound(cmap, {"a": 3}, "min") == {"a": 3}
    for bad in ({"x": 3}, {"a": 3, "b": 1}, {}, "a"):
        with pytest.raises(CommandError) as err:
            _bound(cmap, bad, "min")
        assert err.value.code == ErrorCode.InvalidOptions


def test_compliance_names_the_first_violation_as_balancer_collection_status():
    from ginkgodb.router.balancer import violation
    from ginkgodb.router.zones import layout
    cmap = _map(points=(10,))
    assert violation(cmap, ["s0"], set()) is None
    assert violation(cmap, ["s1"], {"s0"}) == "draining"
    zones = layout(cmap, [{"min": {"a": 10}, "max": {"a": MaxKey()}, "tag": "Z"}], [{"_id": "s1", "tags": ["Z"]}])
    assert violation(cmap, ["s0", "s1"], set(), zones) == "zoneViolation"
    assert violation(cmap.move(cmap.chunks[1], "s1"), ["s0", "s1"], set(), zones) is None
    assert violation(_map(), ["s0", "s1"], set()) == "chunksImbalance"
    across = layout(cmap, [{"min": {"a": 5}, "max": {"a": MaxKey()}, "tag": "Z"}], [{"_id": "s0", "tags": ["Z"]}])
    assert violation(cmap, ["s0"], set(), across) == "zoneViolation"      # [min, 10) crosses the bound 5
