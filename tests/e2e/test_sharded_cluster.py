"""A sharded cluster on loopback: etcd, two single-server shards and a router (`ginkgodb router`),
driven with pymongo as a mongos (docs/design/sharding.md): shard registration and the config
database, hashed and compound shard keys, routed and merged CRUD against a reference, explain,
the single-write rules of 7.0, migrations under concurrent reads and writes with every document
seen exactly once, a second router refreshing its stale chunk map through StaleConfig, and the
balancer evening chunk counts."""
from __future__ import annotations

import threading
import time

import pymongo
import pytest
from bson import MinKey
from support.sharded import small_sharded_cluster, spawn

from ginkgodb import cluster

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


@pytest.fixture(scope="module")
def sharded(tmp_path_factory):
    with small_sharded_cluster(tmp_path_factory.mktemp("sharded"), orphan_cleanup_delay=0.5) as running:
        yield running


def test_the_router_is_a_mongos_and_registers_shards(sharded):
    c = sharded["client"]
    hello = c.admin.command("hello")
    assert hello["msg"] == "isdbgrid" and hello["isWritablePrimary"] is True
    # the fixture added both shards: adding one again answers its name
    names = [c.admin.command("addShard", f"127.0.0.1:{p}")["shardAdded"] for p in sharded["ports"][:2]]
    assert names == ["shard0000", "shard0001"]
    listed = c.admin.command("listShards")["shards"]
    assert [s["_id"] for s in listed] == names and listed[0]["host"] == f"127.0.0.1:{sharded['ports'][0]}"
    assert [d["_id"] for d in c.config.shards.find({}, sort=[("_id", -1)])] == names[::-1]
    c.admin.command("enableSharding", "app")
    assert c.config.databases.find_one({"_id": "app"})["primary"] in names
    assert c.admin.command("balancerStatus")["mode"] == "off"
    with pytest.raises(pymongo.errors.OperationFailure) as err:
        c.admin.command("splitVector", "app.none", keyPattern={"x": 1}, maxChunkSize=1)
    assert err.value.code == 26    # passed to the database's primary shard, which has no such collection


def test_hashed_keys_spread_inserts_and_queries_merge_like_one_server(sharded):
    c, shards = sharded["client"], sharded["shards"]
    c.admin.command("shardCollection", "app.h", key={"x": "hashed"}, numInitialChunks=4)
    assert {ch["shard"] for ch in c.config.chunks.find({"ns": "app.h"})} == {"shard0000", "shard0001"}
    docs = [{"_id": i, "x": i, "g": i % 7, "s": str(i)} for i in range(600)]
    c.app.h.insert_many(docs, ordered=False)
    per_shard = [s.app.h.count_documents({}) for s in shards]
    assert sum(per_shard) == 600 and min(per_shard) > 200, per_shard
    assert all("x_hashed" in s.app.h.index_information() for s in shards)
    assert c.app.h.count_documents({}) == 600 and c.app.h.estimated_document_count() == 600
    got = [d["_id"] for d in c.app.h.find({"g": {"$lt": 3}}, {"s": 0}).sort([("g", -1), ("_id", 1)])
           .skip(10).limit(50).batch_size(7)]
    want = [d["_id"] for d in sorted((d for d in docs if d["g"] < 3), key=lambda d: (-d["g"], d["_id"]))][10:60]
    assert got == want
    assert sorted(d["_id"] for d in c.app.h.find({}).batch_size(13)) == list(range(600))
    assert c.app.h.find_one({"x": 77}) == docs[77]
    assert c.app.h.find({"x": 77}).explain()["queryPlanner"]["winningPlan"]["stage"] == "SINGLE_SHARD"
    plan = c.app.h.find({"g": 1}).explain()["queryPlanner"]["winningPlan"]
    assert plan["stage"] == "SHARD_MERGE" and len(plan["shards"]) == 2 and "winningPlan" in plan["shards"][0]
    assert c.app.h.distinct("g") == list(range(7))
    groups = list(c.app.h.aggregate([{"$match": {"x": {"$gte": 100}}}, {"$group": {"_id": "$g", "n": {"$sum": 1}}},
                                     {"$sort": {"_id": 1}}]))
    assert groups == [{"_id": g, "n": sum(1 for d in docs[100:] if d["g"] == g)} for g in range(7)]
    stats = list(c.app.h.aggregate([{"$group": {"_id": None, "mean": {"$avg": "$x"}, "lo": {"$min": "$x"},
                                                "firsts": {"$push": "$g"}}}]))   # $push: not split
    assert stats[0]["mean"] == 299.5 and stats[0]["lo"] == 0 and len(stats[0]["firsts"]) == 600


def test_plan_cache_commands_reach_every_shard_of_a_sharded_collection(sharded):
    c, shards = sharded["client"], sharded["shards"]
    c.admin.command("shardCollection", "app.pc", key={"_id": "hashed"}, numInitialChunks=2)
    c.app.pc.insert_many([{"_id": i, "a": i % 5, "b": i % 4} for i in range(400)])
    c.app.pc.create_index("a")
    c.app.pc.create_index("b")
    c.app.command("planCacheSetFilter", "pc", query={"a": 1, "b": 1}, indexes=["b_1"])
    assert [s.app.command("planCacheListFilters", "pc")["filters"][0]["indexes"] for s in shards] == [["b_1"]] * 2
    assert c.app.command("planCacheListFilters", "pc")["filters"][0]["indexes"] == ["b_1"]
    c.app.command("planCacheClearFilters", "pc")
    assert [s.app.command("planCacheListFilters", "pc")["filters"] for s in shards] == [[], []]
    assert len(list(c.app.pc.find({"a": 2, "b": 2}))) == 20   # both plans tie on each shard: each caches
    assert all(len(list(s.app.pc.aggregate([{"$planCacheStats": {}}]))) == 1 for s in shards)
    entries = list(c.app.pc.aggregate([{"$planCacheStats": {}}, {"$sort": {"shard": 1}}]))
    assert [e["shard"] for e in entries] == ["shard0000", "shard0001"]   # as mongos: each shard's entries
    assert all(e["createdFromQuery"]["query"] == {"a": 2, "b": 2} for e in entries)
    c.app.command("planCacheClear", "pc")
    assert [list(s.app.pc.aggregate([{"$planCacheStats": {}}])) for s in shards] == [[], []]


def test_writes_follow_7_0s_rules_for_sharded_collections(sharded):
    c = sharded["client"]
    c.admin.command("shardCollection", "app.k", key={"a": 1, "_id": 1})
    c.app.k.insert_many([{"_id": i, "a": i % 10, "v": 0} for i in range(100)])
    assert c.app.k.update_one({"a": 3, "_id": 13}, {"$inc": {"v": 1}}).modified_count == 1
    assert c.app.k.update_one({"_id": 14}, {"$inc": {"v": 1}}).modified_count == 1      # by _id: broadcast
    assert c.app.k.update_many({"a": {"$gte": 5}}, {"$set": {"hi": True}}).modified_count == 50
    with pytest.raises(pymongo.errors.WriteError) as err:
        c.app.k.update_one({"v": 0}, {"$set": {"w": 1}})
    assert err.value.code == 72
    with pytest.raises(pymongo.errors.WriteError) as err:
        c.app.k.update_one({"a": 1}, {"$set": {"w": 1}}, upsert=True)
    assert err.value.code == 61
    with pytest.raises(pymongo.errors.WriteError) as err:
        c.app.k.update_one({"a": 1, "_id": 1}, {"$set": {"a": 2}})
    assert err.value.code == 238
    assert c.app.k.delete_one({"_id": 99}).deleted_count == 1
    assert c.app.k.delete_many({"a": 0}).deleted_count == 10
    with pytest.raises(pymongo.errors.OperationFailure) as err:
        c.app.k.find_one_and_update({"v": 1}, {"$set": {"w": 1}})
    assert err.value.code == 61
    assert c.app.k.find_one_and_update({"a": 3, "_id": 13}, {"$set": {"w": 1}},
                                       return_document=pymongo.ReturnDocument.AFTER)["w"] == 1
    assert c.app.k.count_documents({}) == 89
    with pytest.raises(pymongo.errors.BulkWriteError) as bulk:
        c.app.k.insert_many([{"_id": 500, "a": 1}, {"_id": 501, "a": [1, 2]}, {"_id": 502, "a": 2}], ordered=False)
    assert [(e["index"], e["code"]) for e in bulk.value.details["writeErrors"]] == [(1, 61)]
    assert bulk.value.details["nInserted"] == 2
    c.app.plain.insert_one({"_id": 1})
    primary = c.config.databases.find_one({"_id": "app"})["primary"]
    on = [s for s, name in zip(sharded["shards"], ["shard0000", "shard0001"]) if name == primary][0]
    assert on.app.plain.find_one() == {"_id": 1}
    with c.start_session() as s, s.start_transaction():   # a single-shard transaction (test_sharded_transactions)
        c.app.plain.insert_one({"_id": 2}, session=s)
    assert on.app.plain.count_documents({}) == 2


def test_ten_migrations_never_lose_or_duplicate_a_document_and_stale_routers_refresh(sharded):
    from ginkgodb.router import Router, dispatch
    c = sharded["client"]
    c.admin.command("shardCollection", "app.m", key={"k": 1})
    c.app.m.insert_many([{"_id": i, "k": i} for i in range(400)])
    for point in (100, 200, 300):
        c.admin.command("split", "app.m", middle={"k": point})
    other = Router(sharded["etcd"])             # a second router: its map is cached now
    assert dispatch(other, {"find": "m", "filter": {"k": 250}, "$db": "app"})["cursor"]["firstBatch"]
    stop, seen, errors = threading.Event(), [], []
    inserted: list[int] = []
    increments: dict[int, int] = {}
    watched: list[int] = []

    def read_and_write() -> None:
        n = 1000
        while not stop.is_set():
            try:
                c.app.m.insert_one({"_id": n, "k": n % 400})
                inserted.append(n)
                target = (n * 37) % 400   # an update by the full shard key: one shard, versioned
                assert c.app.m.update_one({"k": target, "_id": target}, {"$inc": {"c": 1}}).modified_count == 1
                increments[target] = increments.get(target, 0) + 1
                n += 1
                ids = [d["_id"] for d in c.app.m.find({}, {"_id": 1})]
                seen.append((len(ids), len(set(ids)), len(inserted)))
                # one document, counted through the router (a broadcast: _id is not the shard key)
                watched.append(c.app.m.count_documents({"_id": 42}))
            except pymongo.errors.PyMongoError as exc:
                errors.append(exc)
    worker = threading.Thread(target=read_and_write)
    worker.start()
    try:
        targets = ["shard0001", "shard0000"]
        for round_ in range(10):
            c.admin.command("moveChunk", "app.m", find={"k": 50 + 100 * (round_ % 4)}, to=targets[round_ % 2])
    finally:
        stop.set()
        worker.join(30)
    assert not errors, errors[:3]
    assert len(inserted) >= 10, "the writer barely ran during the migrations"
    assert seen and all(total == unique for total, unique, _ in seen), "a read saw a document twice"
    assert all(total >= 400 + done - 1 for total, _, done in seen), "a read missed a document"
    assert watched and set(watched) == {1}, f"document 42 counted {sorted(set(watched))} times"
    print(f"{len(inserted)} inserts and updates, {len(seen)} full reads and {len(watched)} counts during "
          "10 migrations")
    ids = sorted(d["_id"] for d in c.app.m.find({}, {"_id": 1}))
    assert ids == list(range(400)) + inserted
    counters = {d["_id"]: d.get("c", 0) for d in c.app.m.find({"_id": {"$lt": 400}})}
    assert counters == {i: increments.get(i, 0) for i in range(400)}, "an update was lost by a migration"
    per_shard = sum(s.app.m.count_documents({}) for s in sharded["shards"])
    assert per_shard == 400 + len(inserted)     # the range deleter left no copy behind
    # the second router still holds the old map: the donor answers StaleConfig and it refreshes
    reply = dispatch(other, {"find": "m", "filter": {"k": {"$gte": 0, "$lt": 400}}, "batchSize": 10000, "$db": "app"})
    assert sorted(d["_id"] for d in reply["cursor"]["firstBatch"]) == ids
    other.close()


def test_the_balancer_evens_chunk_counts(sharded):
    c = sharded["client"]
    c.admin.command("shardCollection", "app.b", key={"k": 1})
    c.app.b.insert_many([{"k": i} for i in range(120)])
    for point in range(20, 120, 20):
        c.admin.command("split", "app.b", middle={"k": point})

    def counts() -> dict:
        out: dict = {}
        for ch in c.config.chunks.find({"ns": "app.b"}):
            out[ch["shard"]] = out.get(ch["shard"], 0) + 1
        return out
    assert max(counts().values()) == 6
    c.admin.command("balancerStart")
    deadline = time.time() + 30
    while time.time() < deadline and sorted(counts().values()) != [3, 3]:
        time.sleep(0.3)
    c.admin.command("balancerStop")
    assert sorted(counts().values()) == [3, 3]
    assert c.app.b.count_documents({}) == 120
    assert c.admin.command("balancerStatus")["numBalancerRounds"] > 0


def test_jumbo_chunks_are_marked_and_never_move(sharded):
    c = sharded["client"]
    c.admin.command("shardCollection", "app.j", key={"k": 1})
    c.app.j.insert_many([{"k": 7} for _ in range(30)])
    c.admin.command("split", "app.j", middle={"k": 7})
    with pytest.raises(pymongo.errors.OperationFailure):
        c.admin.command("split", "app.j", find={"k": 7})
    chunk = c.config.chunks.find_one({"ns": "app.j", "min": {"k": 7}})
    assert chunk["jumbo"] is True
    with pytest.raises(pymongo.errors.OperationFailure):
        c.admin.command("moveChunk", "app.j", find={"k": 7}, to="shard0001" if chunk["shard"] == "shard0000"
                        else "shard0000")


def test_left_over_orphans_are_filtered_then_deleted_and_a_restarted_shard_gets_its_version(sharded):
    from ginkgodb.router import Router
    from ginkgodb.router.migration import delete_pending_ranges
    c = sharded["client"]
    # its own collection, on both shards: the test runs alone too (-k, or a worker of its own)
    c.admin.command("shardCollection", "app.o", key={"k": 1})
    c.app.o.insert_many([{"_id": i, "k": i} for i in range(400)])
    c.admin.command("split", "app.o", middle={"k": 100})
    first = c.config.chunks.find_one({"ns": "app.o", "min": {"k": MinKey()}})
    c.admin.command("moveChunk", "app.o", find={"k": 150},
                    to="shard0001" if first["shard"] == "shard0000" else "shard0000")
    other = "shard0001" if first["shard"] == "shard0000" else "shard0000"
    stray = sharded["shards"][int(other[-1])].app.o
    # what a migration whose router died leaves: a copy on a shard that does not own the range
    router = Router(sharded["etcd"])
    deadline = time.time() + 10     # the donor's copy of the moved chunk deleted first, as after any migration
    while router.catalog.range_deletions("app.o") and time.time() < deadline:
        time.sleep(0.1)
    cmap = router.chunk_map("app.o", refresh=True)
    lease = router.catalog.lock("app.o")   # as a migration holds it: the range deleters wait
    assert lease is not None
    task = router.catalog.add_range_deletion("app.o", other, first["min"], first["max"])
    router.announce(cmap, [other], orphans=True)
    stray.insert_one({"_id": "orphan", "k": 1})
    before = c.app.o.count_documents({})
    assert c.app.o.find_one({"_id": "orphan"}) is None
    assert c.app.o.count_documents({"k": {"$lt": 100}}) == len([d for d in c.app.o.find({"k": {"$lt": 100}})])
    assert "orphan" not in c.app.o.distinct("_id")
    # not targeted by the shard key: both shards; the one holding orphans only on what it owns
    assert c.app.o.update_many({"_id": {"$in": [1, "orphan"]}}, {"$set": {"touched": 1}}).matched_count == 1
    assert (stray.find_one({"_id": "orphan"}) or {}).get("touched") is None
    assert stray.find_one({"_id": "orphan"}) is not None   # still there: reads above filtered it
    router.catalog.unlock(lease)
    # the range deleter of any router (the balancer thread's, every 0.5 s here, or this one) removes it
    delete_pending_ranges(router)
    deadline = time.time() + 10
    while (stray.find_one({"_id": "orphan"}) or router.catalog.range_deletions("app.o")) and time.time() < deadline:
        time.sleep(0.1)
    assert stray.find_one({"_id": "orphan"}) is None and not router.catalog.range_deletions("app.o")
    assert c.app.o.count_documents({}) == before
    router.catalog.remove_range_deletion(task)
    router.close()
    # kill -9 of a shard: back up, it knows no versions until the router tells it
    victim = sharded["procs"][1]
    victim.kill()
    victim.wait(10)
    sharded["procs"][1] = spawn(sharded["shard_argv"][0], sharded["root"] / "s0-again.log")
    assert cluster._wait_port(sharded["ports"][0], 30)
    assert c.app.o.count_documents({}) == before
    assert c.app.o.find_one({"k": 1})["touched"] == 1


def test_split_vector_check_sharding_index_and_cleanup_orphaned_on_the_shards(sharded):
    from ginkgodb.router import Router
    c, shards = sharded["client"], sharded["shards"]
    c.app.sv.insert_many([{"_id": i, "k": i} for i in range(300)])
    c.app.sv.create_index("k")
    # unsharded: the router passes splitVector to the database's primary shard, as mongos
    assert c.admin.command("splitVector", "app.sv", keyPattern={"k": 1}, force=True)["splitKeys"] == [{"k": 150}]
    c.admin.command("shardCollection", "app.sv", key={"k": 1})
    with pytest.raises(pymongo.errors.OperationFailure) as err:
        c.admin.command("splitVector", "app.sv", keyPattern={"k": 1}, maxChunkSize=1)
    assert err.value.code == 20
    for name in ("checkShardingIndex", "cleanupOrphaned"):   # mongod's commands, not mongos'
        with pytest.raises(pymongo.errors.OperationFailure) as err:
            c.admin.command(name, "app.sv", keyPattern={"k": 1})
        assert err.value.code == 59
    owner = c.config.chunks.find_one({"ns": "app.sv"})["shard"]
    other = "shard0001" if owner == "shard0000" else "shard0000"
    home, stray = shards[int(owner[-1])], shards[int(other[-1])]
    assert home.admin.command("checkShardingIndex", "app.sv", keyPattern={"k": 1})["ok"] == 1.0
    size = home.app.command("collStats", "sv")["size"]
    assert home.admin.command("splitVector", "app.sv", keyPattern={"k": 1},
                              maxChunkSizeBytes=size)["splitKeys"] == [{"k": 150}]
    c.admin.command("split", "app.sv", middle={"k": 150})
    c.admin.command("moveChunk", "app.sv", find={"k": 200}, to=other)
    assert home.admin.command("cleanupOrphaned", "app.sv")["ok"] == 1.0    # the range deleter ran already
    assert home.app.sv.count_documents({}) == 150 and stray.app.sv.count_documents({}) == 150
    # orphans left on `stray` (as by a migration whose router died): cleanupOrphaned waits for them
    router = Router(sharded["etcd"])
    cmap = router.chunk_map("app.sv", refresh=True)
    lease = router.catalog.lock("app.sv")          # held: the range deleters wait
    assert lease is not None
    router.catalog.add_range_deletion("app.sv", other, {"k": MinKey()}, {"k": 150})
    router.announce(cmap, [other], orphans=True)
    stray.app.sv.insert_one({"_id": "orphan", "k": 1})
    answers: list = []
    waiter = threading.Thread(target=lambda: answers.append(stray.admin.command("cleanupOrphaned", "app.sv")))
    waiter.start()
    waiter.join(1.5)
    assert waiter.is_alive() and stray.app.sv.find_one({"_id": "orphan"}) is not None
    with pytest.raises(pymongo.errors.ExecutionTimeout):
        stray.admin.command("cleanupOrphaned", "app.sv", maxTimeMS=200)
    router.catalog.unlock(lease)                   # the balancer thread's range deleter (every 0.5 s) runs
    waiter.join(20)
    assert answers and answers[0]["ok"] == 1.0
    assert stray.app.sv.find_one({"_id": "orphan"}) is None and not router.catalog.range_deletions("app.sv")
    assert c.app.sv.count_documents({}) == 300
    router.close()


def test_a_collection_sharded_by_another_router_is_seen(sharded):
    """The router caches "unsharded" and the databases' primary shards while its watch of etcd
    is live: another router's shardCollection and moveChunk reach it through the watch."""
    from ginkgodb.router import Router
    from ginkgodb.router.dispatch import dispatch
    c, shards = sharded["client"], sharded["shards"]
    c.app.w.insert_many([{"_id": i, "k": i} for i in range(100)])
    assert c.app.w.find_one({"_id": 70}) == {"_id": 70, "k": 70}      # cached: unsharded, on the primary
    other = Router(sharded["etcd"])
    try:
        for cmd in ({"shardCollection": "app.w", "key": {"k": 1}}, {"split": "app.w", "middle": {"k": 50}}):
            assert dispatch(other, {**cmd, "$db": "admin"})["ok"] == 1.0
        primary = c.config.databases.find_one({"_id": "app"})["primary"]
        away = "shard0001" if primary == "shard0000" else "shard0000"
        assert dispatch(other, {"moveChunk": "app.w", "find": {"k": 60}, "to": away, "$db": "admin"})["ok"] == 1.0
    finally:
        other.close()
    assert shards[int(away[-1])].app.w.count_documents({}) == 50
    assert c.app.w.find_one({"_id": 70}) == {"_id": 70, "k": 70}
    assert c.app.w.find_one({"k": 70}) == {"_id": 70, "k": 70}
    assert c.app.w.count_documents({}) == 100
    c.app.w.insert_one({"_id": 100, "k": 100})                          # routed to the chunk's new owner
    assert shards[int(away[-1])].app.w.find_one({"_id": 100}) is not None


def test_one_shard_reads_forwarded_as_bytes_answer_as_the_general_path(sharded):
    """Finds one shard answers whole (router/passthrough.py): the shard's reply, its open cursor
    paged through the router, and errors and refusals as the general path gives them."""
    c, shards = sharded["client"], sharded["shards"]
    c.app.pu.insert_many([{"_id": i, "v": i % 7} for i in range(250)])
    c.admin.command("shardCollection", "app.ph", key={"_id": "hashed"}, numInitialChunks=4)
    c.app.ph.insert_many([{"_id": i, "v": i % 7, "a": [{"b": i}, {"b": -i}]} for i in range(200)])
    assert c.app.pu.find_one({"_id": 12}, {"_id": 0}) == {"v": 5}
    assert [d["_id"] for d in c.app.pu.find({"v": 3}).sort("_id", -1).skip(2).limit(5)] == \
        sorted((i for i in range(250) if i % 7 == 3), reverse=True)[2:7]
    assert [d["_id"] for d in c.app.pu.find({}, batch_size=40).sort("_id", 1)] == list(range(250))
    assert c.app.ph.find_one({"_id": 33}, {"v": 1}) == {"_id": 33, "v": 5}
    for i in (0, 1, 57, 199):   # each on the shard owning it, none elsewhere
        assert c.app.ph.find_one({"_id": i, "v": i % 7}) == {"_id": i, "v": i % 7, "a": [{"b": i}, {"b": -i}]}
    assert c.app.ph.find_one({"_id": 500}) is None
    assert sum(s.app.ph.count_documents({}) for s in shards) == 200
    with pytest.raises(pymongo.errors.OperationFailure) as bad:
        c.app.ph.find_one({"_id": 1, "$nope": 1})
    with pytest.raises(pymongo.errors.OperationFailure) as direct:
        shards[0].app.ph.find_one({"_id": 1, "$nope": 1})
    assert (bad.value.code, str(bad.value.details["errmsg"])) == (direct.value.code, direct.value.details["errmsg"])
    with pytest.raises(pymongo.errors.OperationFailure) as positional:   # refused on a sharded collection
        c.app.ph.find_one({"_id": 1, "a.b": 1}, {"a.$": 1})
    assert positional.value.code == 238


def test_a_new_router_serves_from_etcd_after_kill_9(sharded):
    c = sharded["client"]
    c.admin.command("shardCollection", "app.k9", key={"x": "hashed"}, numInitialChunks=4)
    c.app.k9.insert_many([{"_id": i, "x": i} for i in range(600)])
    router = sharded["procs"][-1]
    router.kill()
    router.wait(10)
    sharded["procs"].append(spawn(sharded["router_argv"], sharded["root"] / "router2.log"))
    assert cluster._wait_port(sharded["ports"][2], 30)
    assert c.app.k9.count_documents({}) == 600
    assert c.app.k9.find({"x": 5}).explain()["queryPlanner"]["winningPlan"]["stage"] == "SINGLE_SHARD"
    assert [s["_id"] for s in c.admin.command("listShards")["shards"]] == ["shard0000", "shard0001"]
