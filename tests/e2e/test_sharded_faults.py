"""Faults during a migration (docs/design/sharding.md, Migration): kill -9 of the donor or of
the recipient while the range is being cloned. The migration aborts or completes, never both:
afterwards etcd names one owner, the owner holds every document of the range, reads through the
router see each document exactly once, and the range deleter empties the other shard's copy."""
from __future__ import annotations

import threading
import time

import pymongo
import pytest
from e2e.test_sharded_cluster import sharded  # noqa: F401  (this module gets a cluster of its own)
from support.sharded import spawn

from ginkgodb import cluster

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]
DOCS = 6000
PAD = "x" * 1000   # 6 MB in the range: the clone takes a few seconds


def _restart(sharded, i: int) -> None:  # noqa: F811
    procs = sharded["procs"]
    procs[1 + i] = spawn(sharded["shard_argv"][i], sharded["root"] / f"s{i}.log")
    assert cluster._wait_port(sharded["ports"][i], 30), f"shard {i} did not restart"


def _settled(read, timeout: float = 30.0):
    """`read()` once the cluster answers again (the restarted shard, its version re-sent)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return read()
        except pymongo.errors.PyMongoError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)


@pytest.mark.parametrize("victim", ["donor", "recipient"])
def test_kill_9_of_a_shard_during_a_migration_loses_and_duplicates_nothing(sharded, victim):  # noqa: F811
    c = sharded["client"]
    name = f"f_{victim}"
    ns = f"app.{name}"
    c.admin.command("shardCollection", ns, key={"k": 1})
    c.app[name].insert_many([{"_id": i, "k": i, "p": PAD} for i in range(DOCS)], ordered=False)
    donor = c.config.chunks.find_one({"ns": ns})["shard"]
    donor_i = int(donor[-1])
    recipient = f"shard000{1 - donor_i}"
    victim_i = donor_i if victim == "donor" else 1 - donor_i
    on_recipient = sharded["shards"][1 - donor_i].app[name]
    outcome: dict = {}

    def move() -> None:
        mover = pymongo.MongoClient(f"127.0.0.1:{sharded['ports'][2]}", serverSelectionTimeoutMS=10000)
        try:
            mover.admin.command("moveChunk", ns, find={"k": 0}, to=recipient)
            outcome["ok"] = True
        except pymongo.errors.PyMongoError as exc:
            outcome["error"] = exc
        finally:
            mover.close()
    mover = threading.Thread(target=move)
    mover.start()
    deadline = time.monotonic() + 30
    while on_recipient.estimated_document_count() == 0 and not outcome:   # the clone has begun
        assert time.monotonic() < deadline, "the clone never started"
        time.sleep(0.02)
    sharded["procs"][1 + victim_i].kill()   # SIGKILL
    sharded["procs"][1 + victim_i].wait(10)
    mover.join(60)
    assert not mover.is_alive(), "moveChunk did not return after the shard died"
    _restart(sharded, victim_i)
    owner = _settled(lambda: c.config.chunks.find_one({"ns": ns})["shard"])
    assert owner in (donor, recipient)
    if "ok" in outcome:
        assert owner == recipient, "moveChunk answered ok but etcd kept the donor"
    ids = _settled(lambda: [d["_id"] for d in c.app[name].find({}, {"_id": 1}).batch_size(10000)])
    assert len(ids) == len(set(ids)) == DOCS and sorted(ids) == list(range(DOCS)), "a document was lost or doubled"
    assert _settled(lambda: c.app[name].count_documents({})) == DOCS
    owner_direct = sharded["shards"][int(owner[-1])].app[name]
    assert owner_direct.count_documents({}) == DOCS, "the owner lacks documents of its range"
    other = sharded["shards"][1 - int(owner[-1])].app[name]
    deadline = time.monotonic() + 30   # the range deleter removes the copy the other shard kept
    while _settled(lambda: other.count_documents({})):
        assert time.monotonic() < deadline, "the other shard's copy was never deleted"
        time.sleep(0.5)
    print(f"killed the {victim}: moveChunk {'completed' if owner == recipient else 'aborted'} "
          f"({'ok' if 'ok' in outcome else type(outcome.get('error')).__name__})")
