"""The shard-side sharding commands as mongod 7.0 answers them: splitVector's cuts (by size,
by count, forced, bounded, capped by maxSplitPoints) and its argument errors,
checkShardingIndex's verdict with mongod's reasons, and cleanupOrphaned waiting for the
shard's orphans of a namespace to be deleted (or for maxTimeMS)."""
from __future__ import annotations

import threading
import time

import pytest
from bson.int64 import Int64
from bson.objectid import ObjectId
from bson.timestamp import Timestamp
from support.runner import Runner

from ginkgodb.commands.split_points import cut_points


@pytest.fixture
def shard(engine):
    run = Runner(engine)
    run.insert("c", *[{"_id": i, "x": i // 2, "p": "x" * 100} for i in range(2000)])
    run({"createIndexes": "c", "indexes": [{"key": {"x": 1, "_id": 1}, "name": "x_id"}]})
    return run, Runner(engine, db="admin")


def _split(admin, **kw):
    return admin({"splitVector": "test.c", "keyPattern": {"x": 1}, **kw})["splitKeys"]


def test_cut_points_is_the_one_rule_for_counts_and_sizes():
    entries = [([k], 1) for k in [0, 1, 2, 2, 2, 2, 3, 4, 5, 6]]
    assert cut_points(entries, 3) == [[2], [3], [6]]     # the run of 2 is never cut: it starts a piece whole
    assert cut_points(entries, 3, max_points=1) == [[2]]
    assert cut_points([([k], 1) for k in [0, 0, 0, 0, 1, 2, 3]], 2) == [[1], [3]]
    assert cut_points([([7], 1)] * 10, 2) == []           # one key value: no cut at all


def test_split_vector_cuts_every_half_chunk_of_keys(shard):
    _, admin = shard
    stats = admin.raw({"collStats": "c", "$db": "test"})
    avg = stats["size"] // stats["count"]
    keys = _split(admin, maxChunkSizeBytes=100 * avg * 2)   # 100 keys a piece
    assert keys[:3] == [{"x": 50}, {"x": 100}, {"x": 150}] and len(keys) == 19
    assert _split(admin, maxChunkSizeBytes=100 * avg * 2, maxSplitPoints=2) == [{"x": 50}, {"x": 100}]
    assert _split(admin, maxChunkSizeBytes=100 * avg * 2, maxChunkObjects=500) == keys   # the size is lower
    assert _split(admin, maxChunkSizeBytes=stats["size"], maxChunkObjects=400) == [{"x": 200}, {"x": 400},
                                                                                    {"x": 600}, {"x": 800}]
    assert _split(admin, maxChunkSizeBytes=stats["size"] + 1, maxChunkObjects=400) == []   # the data fits
    # a range: min inclusive, max exclusive, keys of the pattern's fields only
    ranged = _split(admin, maxChunkSizeBytes=100 * avg * 2, min={"x": 300}, max={"x": 600})
    assert ranged == [{"x": 350}, {"x": 400}, {"x": 450}, {"x": 500}, {"x": 550}]
    # maxChunkSize is in MB; the collection (about 260 KB) fits one: no cut
    assert _split(admin, maxChunkSize=1) == []
    assert _split(admin, force=True) == [{"x": 500}]


def test_split_vector_finds_no_cut_in_one_key_value(engine):
    run, admin = Runner(engine), Runner(engine, db="admin")
    run.insert("j", *[{"_id": i, "k": 7} for i in range(300)])
    run({"createIndexes": "j", "indexes": [{"key": {"k": "hashed"}, "name": "k_hashed"}]})
    assert admin({"splitVector": "test.j", "keyPattern": {"k": "hashed"}, "maxChunkSizeBytes": 100})["splitKeys"] == []
    run.insert("j", {"_id": 300, "k": 8})
    keys = admin({"splitVector": "test.j", "keyPattern": {"k": "hashed"}, "force": True})["splitKeys"]
    assert len(keys) == 1 and isinstance(keys[0]["k"], Int64)   # hashed keys are cut at hash values


def test_split_vector_refuses_what_mongod_refuses(shard):
    _, admin = shard
    assert admin.error({"splitVector": "test.c", "maxChunkSize": 1}) == {
        "ok": 0.0, "errmsg": "no key pattern found in splitVector"}
    assert admin.error({"splitVector": "test.c", "keyPattern": {"x": 1}, "min": {"x": 1}, "maxChunkSize": 1}) == {
        "ok": 0.0, "errmsg": "either provide both min and max or leave both empty"}
    err = admin.error({"splitVector": "test.c", "keyPattern": {"x": 1}})
    assert (err["code"], err["errmsg"]) == (72, "need to specify the desired max chunk size")
    err = admin.error({"splitVector": "test.c", "keyPattern": {"y": 1}, "maxChunkSize": 1})
    assert (err["code"], err["errmsg"]) == (27, "couldn't find index over splitting key { y: 1 }")
    err = admin.error({"splitVector": "test.none", "keyPattern": {"x": 1}, "maxChunkSize": 1})
    assert (err["code"], err["errmsg"]) == (26, "ns not found")
    assert admin.error({"splitVector": "nodot", "keyPattern": {"x": 1}})["code"] == 73
    assert admin.error({"splitVector": 5, "keyPattern": {"x": 1}})["code"] == 2
    assert admin.error({"splitVector": "test.c", "keyPattern": {"x": 1}, "bogus": 1})["code"] == 40415


def test_check_sharding_index_says_why_no_index_fits(shard):
    run, admin = shard
    assert admin({"checkShardingIndex": "test.c", "keyPattern": {"x": 1}}) == {"ok": 1.0}
    assert admin({"checkShardingIndex": "test.c", "keyPattern": {"_id": 1}}) == {"idskip": True, "ok": 1.0}
    run({"createIndexes": "c", "indexes": [{"key": {"y": 1}, "name": "y_sparse", "sparse": True},
                                           {"key": {"z": 1}, "name": "z_partial",
                                            "partialFilterExpression": {"z": {"$gt": 0}}}]})
    assert admin.error({"checkShardingIndex": "test.c", "keyPattern": {"y": 1}})["errmsg"] == "\n".join([
        "couldn't find valid index for shard key",
        "Index _id_ cannot be used for sharding because: Shard key is not a prefix of index key.",
        "Index x_id cannot be used for sharding because: Shard key is not a prefix of index key.",
        "Index y_sparse cannot be used for sharding because: Index key is sparse.",
        "Index z_partial cannot be used for sharding because: Index key is partial. "
        "Shard key is not a prefix of index key."])
    run.insert("c", {"_id": "arr", "x": [1, 2]})        # multikey: splitVector may use it, a shard key not
    reply = admin.error({"checkShardingIndex": "test.c", "keyPattern": {"x": 1}})
    assert "Index x_id cannot be used for sharding because: Index key is multikey." in reply["errmsg"]
    assert admin.error({"checkShardingIndex": "test.none", "keyPattern": {"x": 1}}) == {
        "ok": 0.0, "errmsg": "ns not found"}
    assert admin.error({"checkShardingIndex": "test.c"}) == {
        "ok": 0.0, "errmsg": "no key pattern found in checkShardingindex"}


def test_cleanup_orphaned_waits_for_the_range_deleter(shard):
    run, admin = shard
    assert admin({"cleanupOrphaned": "test.c"}) == {"ok": 1.0}          # no orphans known: at once
    assert run.error({"cleanupOrphaned": "test.c"})["code"] == 13          # admin only
    version = {"_ginkgoSetShardVersion": "test.c", "e": ObjectId(), "t": Timestamp(1, 1), "v": Timestamp(1, 0)}
    admin({**version, "orphans": True})
    try:
        err = admin.error({"cleanupOrphaned": "test.c", "maxTimeMS": 300})
        assert err["code"] == 50
        started = time.monotonic()
        clear = threading.Timer(0.3, lambda: admin({"_ginkgoSetShardVersion": "test.c", "orphans": False}))
        clear.start()
        assert admin({"cleanupOrphaned": "test.c", "startingFromKey": {"x": 5}}) == {"ok": 1.0}
        assert time.monotonic() - started >= 0.25
        clear.join()
    finally:
        admin({"_ginkgoSetShardVersion": "test.c", "unset": True})
