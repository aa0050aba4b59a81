"""replSetSyncFrom and replSetResizeOplog on a three-member set on loopback (`ginkgodb cluster
start`): a secondary told to sync from the other secondary answers mongod's reply, pulls from it
(chained: its position reaches the primary through the middle member, so `w: 3` is satisfied)
and returns to the primary when that member goes away; the oplog resize is per member."""
from __future__ import annotations

import os
import signal
import time

import pymongo
import pytest
from e2e.test_replica_set_cluster import direct
from pymongo.write_concern import WriteConcern
from support.etcd import ensure_etcd
from support.sockets import free_port_range
from support.timing import wait_until

from ginkgodb import cluster

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]
MB = 1024 * 1024


@pytest.fixture(scope="module")
def rs(tmp_path_factory):
    ensure_etcd()
    state = cluster.start("rs0", 3, free_port_range(3), str(tmp_path_factory.mktemp("sync-from") / "rs"))
    yield state
    cluster.stop(state["dir"])


def host(state: dict, n: int) -> str:
    return f"127.0.0.1:{state['port'] + n}"




def sync_source(state: dict, n: int) -> str:
    return direct(state, n).admin.command("replSetGetStatus")["syncSourceHost"]


def test_a_secondary_syncs_from_the_member_it_is_told_to(rs):
    p = cluster.wait_for_primary(rs, 15)
    middle, last = [n for n in range(3) if n != p]
    assert wait_until(lambda: sync_source(rs, last) == host(rs, p), 10)
    assert wait_until(lambda: all(m["optime"]["ts"].time > 0 for m in  # heartbeats heard every member
                                  direct(rs, last).admin.command("replSetGetStatus")["members"]), 10)
    reply = direct(rs, last).admin.command("replSetSyncFrom", host(rs, middle))
    assert reply["ok"] == 1.0 and reply["syncFromRequested"] == host(rs, middle)
    assert reply["prevSyncTarget"] == host(rs, p) and "warning" not in reply
    assert wait_until(lambda: sync_source(rs, last) == host(rs, middle), 10)
    # chained: the entry reaches `last` through `middle`, and its position reaches the primary
    client = pymongo.MongoClient(cluster.connection_string(rs), serverSelectionTimeoutMS=10000)
    coll = client.chained.get_collection("c", write_concern=WriteConcern(w=3, wtimeout=10000))
    started = time.monotonic()
    coll.insert_one({"_id": 1})
    print(f"\nw: 3 through a chained member: {time.monotonic() - started:.3f} s")
    assert direct(rs, last, readPreference="secondaryPreferred").chained.c.find_one() == {"_id": 1}
    # and the mistakes answer mongod's errors
    for n, target, code in [(p, host(rs, middle), "NotSecondary"), (last, host(rs, last), "InvalidOptions"),
                            (last, "127.0.0.1:1", "NodeNotFound"), (last, 5, "TypeMismatch"),
                            (last, "", "FailedToParse")]:
        with pytest.raises(pymongo.errors.OperationFailure) as failed:
            direct(rs, n).admin.command("replSetSyncFrom", target)
        assert failed.value.details["codeName"] == code, (n, target, failed.value.details)
    # the chosen source stops answering: once its heartbeats fail, the member pulls from the primary
    pid = int(rs["pids"][str(middle)])
    os.kill(pid, signal.SIGSTOP)
    try:
        stopped = time.monotonic()
        assert wait_until(lambda: sync_source(rs, last) == host(rs, p), 15)
        print(f"back to the primary {time.monotonic() - stopped:.2f} s after its source stopped")
        coll.with_options(write_concern=WriteConcern(w=2, wtimeout=10000)).insert_one({"_id": 2})
    finally:
        os.kill(pid, signal.SIGCONT)
    assert wait_until(lambda: direct(rs, last, readPreference="secondaryPreferred").chained.c.count_documents({})
                      == 2, 10)
    client.close()


def test_replset_resize_oplog_resizes_this_members_oplog_only(rs):
    p = cluster.wait_for_primary(rs, 15)
    s = next(n for n in range(3) if n != p)
    secondary = direct(rs, s)
    assert secondary.admin.command("replSetResizeOplog", 1, size=2000, minRetentionHours=1.5)["ok"] == 1.0
    assert secondary.local.command("collStats", "oplog.rs")["maxSize"] == 2000 * MB
    assert direct(rs, p).local.command("collStats", "oplog.rs")["maxSize"] != 2000 * MB
    with pytest.raises(pymongo.errors.OperationFailure) as failed:
        secondary.admin.command("replSetResizeOplog", 1, size=100)
    assert failed.value.code == 51024
