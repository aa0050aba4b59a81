"""A shard's check of `shardVersion`: requests from an older chunk map (another epoch, an older
major) or during a migration's critical section answer 13388 StaleConfig; unversioned
requests and namespaces no router set pass."""
from __future__ import annotations

import pytest
from bson.objectid import ObjectId
from bson.timestamp import Timestamp
from support.runner import Runner

EPOCH = ObjectId()


@pytest.fixture
def shard(engine):
    run = Runner(engine)
    admin = Runner(engine, db="admin")
    run.insert("c", {"_id": 1})
    admin({"_ginkgoSetShardVersion": "test.c", "e": EPOCH, "t": Timestamp(1, 1), "v": Timestamp(2, 0)})
    yield run, admin
    admin({"_ginkgoSetShardVersion": "test.c", "unset": True})


def _find(version):
    return {"find": "c", "filter": {}, "shardVersion": version}


def test_the_current_version_is_served_and_an_older_one_is_stale(shard):
    run, _ = shard
    assert run(_find({"e": EPOCH, "t": Timestamp(1, 1), "v": Timestamp(2, 5)}))["cursor"]["firstBatch"] == [{"_id": 1}]
    err = run.error(_find({"e": EPOCH, "t": Timestamp(1, 1), "v": Timestamp(1, 3)}))
    assert err["code"] == 13388 and err["codeName"] == "StaleConfig" and err["ns"] == "test.c"
    assert err["vWanted"]["v"] == Timestamp(2, 0)
    assert run.error(_find({"e": ObjectId(), "t": Timestamp(1, 1), "v": Timestamp(2, 0)}))["code"] == 13388


def test_unversioned_requests_pass_and_an_unknown_namespace_asks_for_its_version(shard):
    run, _ = shard
    assert run({"find": "c", "filter": {}})["ok"] == 1.0
    assert run({"find": "d", "filter": {}})["ok"] == 1.0
    err = run.error({"find": "d", "filter": {}, "shardVersion": {"e": ObjectId(), "v": Timestamp(9, 9)}})
    assert err["code"] == 13388 and err["unknown"] is True and err["ns"] == "test.d"


def test_orphans_refuse_what_counts_on_none_until_cleared(shard):
    run, admin = shard
    version = {"e": EPOCH, "t": Timestamp(1, 1), "v": Timestamp(2, 0)}
    admin({"_ginkgoSetShardVersion": "test.c", "orphans": True})
    err = run.error({"count": "c", "shardVersion": {**version, "noOrphans": True}})
    assert err["code"] == 13388 and err["orphans"] is True
    assert run({"count": "c", "shardVersion": version})["n"] == 1
    admin({"_ginkgoSetShardVersion": "test.c", "orphans": False})
    assert run({"count": "c", "shardVersion": {**version, "noOrphans": True}})["n"] == 1


def test_the_critical_section_makes_every_versioned_request_stale(shard):
    run, admin = shard
    admin({"_ginkgoSetShardVersion": "test.c", "e": EPOCH, "t": Timestamp(1, 1), "v": Timestamp(2, 0),
           "critical": True})
    assert run.error({"insert": "c", "documents": [{"_id": 2}],
                      "shardVersion": {"e": EPOCH, "t": Timestamp(1, 1), "v": Timestamp(2, 0)}})["code"] == 13388
    assert run.find("c") == [{"_id": 1}]


def test_set_shard_version_checks_its_arguments(engine):
    admin = Runner(engine, db="admin")
    assert admin.error({"_ginkgoSetShardVersion": "nodot", "v": Timestamp(1, 0)})["code"] == 73
    assert admin.error({"_ginkgoSetShardVersion": "a.b", "v": 3})["code"] == 14
    assert Runner(engine).error({"_ginkgoSetShardVersion": "a.b", "v": Timestamp(1, 0)})["code"] == 13


def test_entering_the_critical_section_waits_for_requests_past_the_check(shard):
    import threading
    import time

    from ginkgodb.commands.shard_versions import enter_versioned, leave_versioned
    _, admin = shard
    version = {"e": EPOCH, "t": Timestamp(1, 1), "v": Timestamp(2, 0)}
    entered = []
    ns = enter_versioned({"insert": "c", "$db": "test", "shardVersion": version})
    assert ns == "test.c"
    worker = threading.Thread(target=lambda: entered.append(admin({"_ginkgoSetShardVersion": "test.c",
                                                                   **version, "critical": True})))
    worker.start()
    time.sleep(0.2)
    assert not entered, "the critical section began while a versioned write was running"
    leave_versioned(ns)
    worker.join(5)
    assert entered and entered[0]["ok"] == 1.0


def test_a_versioned_find_counts_under_its_shape_and_is_found_by_its_key(shard, engine):
    """A router's find carries shardVersion, which is no part of a query shape: its executions
    count with the same find's unversioned ones, and repeats are found by the find's key (no
    shape built per request)."""
    run, admin = shard
    version = {"e": EPOCH, "t": Timestamp(1, 1), "v": Timestamp(2, 0)}
    for i in range(3):
        assert run({"find": "c", "filter": {"_id": i}, "shardVersion": version})["ok"] == 1.0
    run({"find": "c", "filter": {"_id": 9}})
    shapes = [s for s in admin.raw({"aggregate": 1, "pipeline": [{"$queryStats": {}}], "cursor": {}})
              ["cursor"]["firstBatch"] if s["key"]["queryShape"].get("filter") == {"_id": {"$eq": "?number"}}]
    assert len(shapes) == 1 and shapes[0]["metrics"]["execCount"] == 4
    assert any("shardVersion" in key[1].names for key in engine.query_stats.keyed)
