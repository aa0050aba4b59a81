"""Chunk administration on a small sharded cluster (etcd, two single-server shards, a router
whose balancer wakes every 0.5 s): mergeChunks and moveRange, splitting by size with a 1 MB
chunk size (and a jumbo chunk), and removeShard draining a shard to completion
(docs/design/sharding.md)."""
from __future__ import annotations

import threading
import time

import pymongo
import pytest
from bson.max_key import MaxKey
from bson.min_key import MinKey
from support.sharded import small_sharded_cluster

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]
NAMES = ["shard0000", "shard0001"]


@pytest.fixture(scope="module")
def cl(tmp_path_factory):
    with small_sharded_cluster(tmp_path_factory.mktemp("shardadmin"), orphan_cleanup_delay=0.2) as running:
        yield running


def _chunks(c, ns: str) -> list[tuple]:
    return [(ch["min"], ch["max"], ch["shard"]) for ch in c.config.chunks.find({"ns": ns}).sort("min", 1)]


def _wait(predicate, seconds: float = 30.0) -> bool:
    deadline = time.time() + seconds
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.3)
    return predicate()


def test_merge_chunks_and_move_range(cl):
    c = cl["client"]
    c.admin.command("shardCollection", "adm.g", key={"k": 1})
    c.adm.g.insert_many([{"_id": i, "k": i} for i in range(100)])
    for p in (10, 20, 30, 40):
        c.admin.command("split", "adm.g", middle={"k": p})
    home = _chunks(c, "adm.g")[0][2]
    other = NAMES[1 - NAMES.index(home)]
    c.admin.command("mergeChunks", "adm.g", bounds=[{"k": 10}, {"k": 40}])
    assert [(lo["k"], hi["k"]) for lo, hi, _ in _chunks(c, "adm.g")] == \
        [(MinKey(), 10), (10, 40), (40, MaxKey())]
    c.admin.command("mergeChunks", "adm.g", bounds=[{"k": 10}, {"k": 40}])       # one chunk already: ok
    with pytest.raises(pymongo.errors.OperationFailure) as err:
        c.admin.command("mergeChunks", "adm.g", bounds=[{"k": 10}, {"k": 45}])
    assert err.value.code == 20 and "does not contain a sequence of chunks" in str(err.value)
    with pytest.raises(pymongo.errors.OperationFailure) as err:
        c.admin.command("mergeChunks", "adm.g", bounds=[{"x": 10}, {"x": 45}])
    assert err.value.code == 72
    # moveRange inside one chunk: split at both ends, then the middle moves
    c.admin.command("moveRange", "adm.g", min={"k": 15}, max={"k": 25}, toShard=other)
    assert [(lo["k"], hi["k"], s) for lo, hi, s in _chunks(c, "adm.g")] == \
        [(MinKey(), 10, home), (10, 15, home), (15, 25, other), (25, 40, home), (40, MaxKey(), home)]
    assert sorted(d["_id"] for d in cl["shards"][NAMES.index(other)].adm.g.find()) == list(range(15, 25))
    # only min on a small chunk: the rest of that chunk moves (moveChunk)
    c.admin.command("moveRange", "adm.g", min={"k": 40}, toShard=other)
    assert _chunks(c, "adm.g")[-1][2] == other
    with pytest.raises(pymongo.errors.OperationFailure) as err:
        c.admin.command("moveRange", "adm.g", min={"k": 0}, toShard="nowhere")
    assert err.value.code == 70
    with pytest.raises(pymongo.errors.OperationFailure) as err:
        c.admin.command("moveRange", "adm.g", toShard=other)
    assert err.value.code == 72
    # merging chunks of two shards is refused; after moving back they merge
    with pytest.raises(pymongo.errors.OperationFailure):
        c.admin.command("mergeChunks", "adm.g", bounds=[{"k": MinKey()}, {"k": 40}])
    c.admin.command("moveRange", "adm.g", min={"k": 15}, max={"k": 25}, toShard=home)
    c.admin.command("mergeChunks", "adm.g", bounds=[{"k": MinKey()}, {"k": 40}])
    assert len(_chunks(c, "adm.g")) == 2
    assert sorted(d["_id"] for d in c.adm.g.find()) == list(range(100))


def test_chunks_split_by_size_in_the_balancer_round_and_one_value_is_jumbo(cl):
    c = cl["client"]
    c.admin.command("shardCollection", "adm.big", key={"k": 1})
    c.admin.command("configureCollectionBalancing", "adm.big", chunkSize=1)
    assert c.config.collections.find_one({"_id": "adm.big"})["maxChunkSizeBytes"] == 1024 * 1024
    with pytest.raises(pymongo.errors.OperationFailure) as err:
        c.admin.command("configureCollectionBalancing", "adm.big", chunkSize=2000)
    assert err.value.code == 72
    pad = "x" * 1000
    c.adm.big.insert_many([{"_id": i, "k": i, "pad": pad} for i in range(3000)])      # ~3 MB in one chunk
    c.admin.command("shardCollection", "adm.one", key={"k": 1})
    c.admin.command("configureCollectionBalancing", "adm.one", chunkSize=1)
    c.adm.one.insert_many([{"k": 7, "pad": pad} for _ in range(1500)])                 # one value, 1.5 MB
    assert len(_chunks(c, "adm.big")) == 1
    c.admin.command("balancerStart")
    try:
        assert _wait(lambda: len(_chunks(c, "adm.big")) >= 5 and len({s for *_, s in _chunks(c, "adm.big")}) == 2), \
            _chunks(c, "adm.big")
        assert _wait(lambda: (c.config.chunks.find_one({"ns": "adm.one"}) or {}).get("jumbo") is True)
    finally:
        c.admin.command("balancerStop")
    sizes = []
    for lo, hi, _ in _chunks(c, "adm.big"):
        lo_k, hi_k = lo["k"], hi["k"]
        n = sum(1 for i in range(3000) if (lo_k == MinKey() or i >= lo_k) and (hi_k == MaxKey() or i < hi_k))
        sizes.append(n)
    assert max(sizes) <= 1100, sizes        # every piece within the 1 MB chunk size (1 KB documents)
    # moveRange with only max: the range starts where it reaches the chunk size (or at the chunk's min)
    lo, hi, shard = _chunks(c, "adm.big")[1]
    to = NAMES[1 - NAMES.index(shard)]
    cut = lo["k"] + (hi["k"] - lo["k"]) // 2
    c.admin.command("moveRange", "adm.big", max={"k": cut}, toShard=to)
    assert ({"k": lo["k"]}, {"k": cut}, to) in _chunks(c, "adm.big")
    assert c.admin.command("configureCollectionBalancing", "adm.big", chunkSize=0)["ok"] == 1
    assert "maxChunkSizeBytes" not in c.config.collections.find_one({"_id": "adm.big"})
    with pytest.raises(pymongo.errors.OperationFailure) as err:
        c.admin.command("configureCollectionBalancing", "adm.big", enableAutoMerger=True)
    assert err.value.code == 238
    assert c.adm.big.count_documents({}) == 3000 and c.adm.one.count_documents({}) == 1500
    c.admin.command("clearJumboFlag", "adm.one", find={"k": 7})
    assert "jumbo" not in c.config.chunks.find_one({"ns": "adm.one"})
    # mongosh's sh.disableBalancing: an update of config.collections' noBalance
    c.config.collections.update_one({"_id": "adm.one"}, {"$set": {"noBalance": True}})
    assert c.config.collections.find_one({"_id": "adm.one"})["noBalance"] is True
    with pytest.raises(pymongo.errors.OperationFailure) as err:
        c.config.collections.update_one({"_id": "adm.one"}, {"$set": {"key": {"x": 1}}})
    assert err.value.code == 238


def test_zones_place_their_ranges_on_their_shards(cl):
    c = cl["client"]
    c.admin.command("shardCollection", "adm.z", key={"k": 1})
    c.adm.z.insert_many([{"_id": i, "k": i} for i in range(100)])
    home = _chunks(c, "adm.z")[0][2]
    other = NAMES[1 - NAMES.index(home)]
    with pytest.raises(pymongo.errors.OperationFailure) as err:
        c.admin.command("updateZoneKeyRange", "adm.z", min={"k": 50}, max={"k": MaxKey()}, zone="Z")
    assert err.value.code == 177                          # no shard is in zone Z yet
    c.admin.command("addShardToZone", other, zone="Z")
    c.admin.command("addShardToZone", other, zone="Z")     # idempotent
    assert c.config.shards.find_one({"_id": other})["tags"] == ["Z"]
    c.admin.command("updateZoneKeyRange", "adm.z", min={"k": 50}, max={"k": MaxKey()}, zone="Z")
    tag = c.config.tags.find_one({"ns": "adm.z"})
    version = c.config.version.find_one()                  # mongosh's sh.status() needs it to list the tags
    assert version["_id"] == 1 and version["clusterId"] == c.config.version.find_one()["clusterId"]
    assert (tag["min"], tag["max"], tag["tag"]) == ({"k": 50}, {"k": MaxKey()}, "Z")
    with pytest.raises(pymongo.errors.OperationFailure) as err:
        c.admin.command("updateZoneKeyRange", "adm.z", min={"k": 40}, max={"k": 60}, zone="Z")
    assert err.value.code == 178 and "overlapping" in str(err.value)
    with pytest.raises(pymongo.errors.OperationFailure) as err:
        c.admin.command("removeShardFromZone", other, zone="Z")
    assert err.value.code == 163
    assert c.admin.command("balancerCollectionStatus", "adm.z")["firstComplianceViolation"] == "zoneViolation"
    c.admin.command("balancerStart")
    try:
        assert _wait(lambda: [(lo["k"], s) for lo, _, s in _chunks(c, "adm.z")] == [(MinKey(), home), (50, other)]), \
            _chunks(c, "adm.z")
    finally:
        c.admin.command("balancerStop")
    assert c.admin.command("balancerCollectionStatus", "adm.z")["balancerCompliant"] is True
    on_other = cl["shards"][NAMES.index(other)].adm.z
    assert sorted(d["k"] for d in on_other.find()) == list(range(50, 100))
    assert c.adm.z.count_documents({}) == 100
    c.admin.command("updateZoneKeyRange", "adm.z", min={"k": 50}, max={"k": MaxKey()}, zone=None)
    assert c.config.tags.count_documents({"ns": "adm.z"}) == 0
    c.admin.command("removeShardFromZone", other, zone="Z")
    assert c.config.shards.find_one({"_id": other}).get("tags") == []


def test_refine_collection_shard_key_extends_the_bounds_with_min_key(cl):
    c = cl["client"]
    c.admin.command("shardCollection", "adm.rf", key={"a": 1})
    c.adm.rf.insert_many([{"_id": i, "a": i, "b": -i} for i in range(100)])
    c.admin.command("split", "adm.rf", middle={"a": 50})
    home = _chunks(c, "adm.rf")[0][2]
    other = NAMES[1 - NAMES.index(home)]
    c.admin.command("moveChunk", "adm.rf", find={"a": 60}, to=other)
    epoch = c.config.collections.find_one({"_id": "adm.rf"})["lastmodEpoch"]
    with pytest.raises(pymongo.errors.OperationFailure) as err:
        c.admin.command("refineCollectionShardKey", "adm.rf", key={"a": 1, "b": 1})
    assert err.value.code == 72 and "Please create an index" in str(err.value)
    with pytest.raises(pymongo.errors.OperationFailure) as err:
        c.admin.command("refineCollectionShardKey", "adm.rf", key={"b": 1, "a": 1})
    assert err.value.code == 72
    c.adm.rf.create_index([("a", 1), ("b", 1)])
    c.admin.command("refineCollectionShardKey", "adm.rf", key={"a": 1, "b": 1})
    entry = c.config.collections.find_one({"_id": "adm.rf"})
    assert entry["key"] == {"a": 1, "b": 1} and entry["lastmodEpoch"] != epoch
    assert [(lo, hi, s) for lo, hi, s in _chunks(c, "adm.rf")] == [
        ({"a": MinKey(), "b": MinKey()}, {"a": 50, "b": MinKey()}, home),
        ({"a": 50, "b": MinKey()}, {"a": MaxKey(), "b": MaxKey()}, other)]
    assert c.adm.rf.count_documents({}) == 100 and c.adm.rf.find_one({"a": 70})["b"] == -70
    assert c.adm.rf.find({"a": 70, "b": -70}).explain()["queryPlanner"]["winningPlan"]["stage"] == "SINGLE_SHARD"
    c.adm.rf.insert_one({"_id": "nob", "a": 80})              # missing b: null, still in [50, max)
    assert cl["shards"][NAMES.index(other)].adm.rf.find_one({"_id": "nob"}) is not None
    c.admin.command("split", "adm.rf", middle={"a": 75, "b": 0})
    c.admin.command("moveChunk", "adm.rf", find={"a": 90, "b": 0}, to=home)
    assert sorted(d["_id"] for d in c.adm.rf.find({"a": {"$gte": 75}}) if d["_id"] != "nob") == list(range(75, 100))
    assert c.adm.rf.count_documents({}) == 101


def test_reshard_collection_moves_every_document_to_its_new_owner_once(cl):
    c, shards = cl["client"], cl["shards"]
    c.admin.command("shardCollection", "adm.rs", key={"a": 1})
    c.adm.rs.insert_many([{"_id": i, "a": i, "b": (i * 37) % 300} for i in range(300)])
    c.admin.command("split", "adm.rs", middle={"a": 150})
    home = _chunks(c, "adm.rs")[0][2]
    other = NAMES[1 - NAMES.index(home)]
    c.admin.command("moveChunk", "adm.rs", find={"a": 200}, to=other)
    stop, seen, errors, inserted = threading.Event(), [], [], []

    def read_and_write() -> None:
        n = 1000
        while not stop.is_set():
            try:
                c.adm.rs.insert_one({"_id": n, "a": n % 300, "b": n % 300})
                inserted.append(n)
                n += 1
                ids = [d["_id"] for d in c.adm.rs.find({}, {"_id": 1})]
                seen.append((len(ids), len(set(ids)), len(inserted)))
            except pymongo.errors.PyMongoError as exc:
                errors.append(exc)
                return
    worker = threading.Thread(target=read_and_write)
    worker.start()
    try:
        time.sleep(0.3)
        c.admin.command("reshardCollection", "adm.rs", key={"b": 1})
        time.sleep(0.3)
    finally:
        stop.set()
        worker.join(30)
    assert not errors, errors[:3]
    assert len(inserted) >= 5, "the writer barely ran during the resharding"
    assert seen and all(total == unique for total, unique, _ in seen), "a read saw a document twice"
    assert all(total >= 300 + done - 1 for total, _, done in seen), "a read missed a document"
    entry = c.config.collections.find_one({"_id": "adm.rs"})
    assert entry["key"] == {"b": 1}
    chunks = _chunks(c, "adm.rs")
    assert [set(lo) for lo, _, _ in chunks] == [{"b"}] * len(chunks) and {s for *_, s in chunks} == set(NAMES)
    assert sorted(d["_id"] for d in c.adm.rs.find()) == list(range(300)) + inserted
    on = [sorted(d["b"] for d in s.adm.rs.find()) for s in shards]
    assert sum(len(x) for x in on) == 300 + len(inserted)           # no copy left behind

    def owner(v: int) -> str:
        return next(s for lo, hi, s in chunks if (isinstance(lo["b"], MinKey) or v >= lo["b"])
                    and (isinstance(hi["b"], MaxKey) or v < hi["b"]))
    for i, name in enumerate(NAMES):                                  # each shard holds only what it owns
        assert all(owner(v) == name for v in on[i])
    assert c.adm.rs.find({"b": 5}).explain()["queryPlanner"]["winningPlan"]["stage"] == "SINGLE_SHARD"
    c.admin.command("reshardCollection", "adm.rs", key={"b": 1})      # the same key: nothing to do


def test_remove_shard_drains_its_chunks_then_completes(cl):
    c, shards = cl["client"], cl["shards"]
    c.admin.command("shardCollection", "adm.r", key={"k": 1})
    c.adm.r.insert_many([{"_id": i, "k": i} for i in range(200)])
    for p in (50, 100, 150):
        c.admin.command("split", "adm.r", middle={"k": p})
    home = _chunks(c, "adm.r")[0][2]
    leaving = NAMES[1 - NAMES.index(home)]
    for p in (50, 150):
        c.admin.command("moveChunk", "adm.r", find={"k": p}, to=leaving)
    c.admin.command("enableSharding", "adm2")
    primary2 = c.config.databases.find_one({"_id": "adm2"})["primary"]
    assert primary2 == leaving        # the shard with fewer databases
    c.adm2.plain.insert_one({"_id": 1})
    with pytest.raises(pymongo.errors.OperationFailure) as err:
        c.admin.command("removeShard", "nope")
    assert err.value.code == 70
    host = c.config.shards.find_one({"_id": leaving})["host"]
    first = c.admin.command("removeShard", leaving)
    assert {k: first[k] for k in ("msg", "state", "shard", "dbsToMove")} == \
        {"msg": "draining started successfully", "state": "started", "shard": leaving, "dbsToMove": ["adm2"]}
    assert c.config.shards.find_one({"_id": leaving})["draining"] is True
    assert c.admin.command("balancerCollectionStatus", "adm.r")["firstComplianceViolation"] == "draining"
    with pytest.raises(pymongo.errors.OperationFailure) as err:
        c.admin.command("removeShard", home)          # the other one is draining: it would be the last
    assert err.value.code == 20
    c.admin.command("enableSharding", "adm3")
    assert c.config.databases.find_one({"_id": "adm3"})["primary"] == home    # a draining shard gets none
    again = c.admin.command("removeShard", leaving)
    assert again["state"] == "ongoing" and again["remaining"]["dbs"] == 1 and again["dbsToMove"] == ["adm2"]
    c.admin.command("balancerStart")
    try:
        assert _wait(lambda: c.admin.command("removeShard", leaving)["remaining"]["chunks"] == 0)
    finally:
        c.admin.command("balancerStop")
    assert c.admin.command("removeShard", leaving)["state"] == "ongoing"        # adm2 still lives there
    # movePrimary copies adm2's unsharded collections (indexes, views) while writers wait, then switches
    c.adm2.plain.create_index("v", unique=True)
    c.adm2.command("create", "evens", viewOn="plain", pipeline=[{"$match": {"v": {"$mod": [2, 0]}}}])
    c.adm2.plain.insert_many([{"_id": i, "v": i} for i in range(2, 300)])
    written, errors, stop = [], [], threading.Event()

    def writer() -> None:
        n = 1000
        while not stop.is_set():
            try:
                c.adm2.plain.insert_one({"_id": n, "v": n})
            except pymongo.errors.PyMongoError as exc:
                errors.append(exc)
                return
            written.append(n)
            n += 1
    worker = threading.Thread(target=writer)
    worker.start()
    try:
        time.sleep(0.2)
        with pytest.raises(pymongo.errors.OperationFailure) as err:
            c.admin.command("movePrimary", "adm2", to="nowhere")
        assert err.value.code == 70
        c.admin.command("movePrimary", "adm2", to=home)
        time.sleep(0.2)
    finally:
        stop.set()
        worker.join(30)
    assert not errors and len(written) > 5, (errors, len(written))
    assert c.config.databases.find_one({"_id": "adm2"})["primary"] == home
    moved = shards[NAMES.index(home)].adm2
    assert sorted(d["_id"] for d in moved.plain.find()) == [1] + list(range(2, 300)) + written
    assert c.adm2.plain.count_documents({}) == 299 + len(written)
    assert "v_1" in moved.plain.index_information() and c.adm2.evens.count_documents({"v": {"$lt": 10}}) == 4
    assert "plain" not in shards[NAMES.index(leaving)].adm2.list_collection_names()
    done = c.admin.command("removeShard", leaving)
    assert {k: done[k] for k in ("msg", "state", "shard")} == \
        {"msg": "removeshard completed successfully", "state": "completed", "shard": leaving}
    assert [s["_id"] for s in c.admin.command("listShards")["shards"]] == [home]
    assert sorted(d["_id"] for d in c.adm.r.find()) == list(range(200))
    assert {s for *_, s in _chunks(c, "adm.big")} == {home}
    assert c.adm.big.count_documents({}) == 3000
    assert shards[NAMES.index(home)].adm.r.count_documents({}) == 200
    with pytest.raises(pymongo.errors.OperationFailure) as err:
        c.admin.command("removeShard", home)
    assert err.value.code == 20
    # the drained server can join again, under a name above every shard's (mongod's rule)
    assert c.admin.command("addShard", host)["shardAdded"] == f"shard{int(home[5:]) + 1:04d}"
    assert c.adm.r.count_documents({}) == 200
