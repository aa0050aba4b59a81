"""A three-member set on loopback (`ginkgodb cluster start`, one set for the module) where a
member comes and goes: a rollback of a former primary's catalog changes, a retryable write
retried on the new primary after kill -9 of the old one (answered as the original, applied
once), and an initial sync of a member added with an empty data directory (STARTUP2, then
SECONDARY, with every collection, option, index and document of the set, time-series
collections included; killed once during the clone, it starts again cleanly)
(docs/design/replication.md)."""
from __future__ import annotations

import datetime
import os
import signal
import socket
import struct
import threading
import time
import uuid
from pathlib import Path

import bson
import pymongo
import pytest
from bson.binary import Binary
from bson.int64 import Int64
from e2e.test_replica_set_cluster import direct
from support.etcd import ensure_etcd
from support.sockets import free_port_range, recv_exactly
from support.timing import wait_until

from ginkgodb import cluster

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


@pytest.fixture(scope="module")
def rs(tmp_path_factory):
    ensure_etcd()
    root = tmp_path_factory.mktemp("sync")
    state = cluster.start("rs0", 3, free_port_range(4), str(root / "rs"))
    # the member to add listens from the start: a port left free meanwhile may be taken by a
    # client connection's ephemeral port on this busy loopback
    state["pids"]["3"] = cluster._spawn(cluster.member_argv(state, 3), root / "rs" / "member3.log")
    cluster._save(state)
    yield state
    cluster.stop(state["dir"])


def _pid(rs: dict, member: str) -> int:
    """A member's current pid: from the cluster's state file, which restarts update."""
    return int(cluster.load_state(rs["dir"])["pids"][member])


def command(port: int, cmd: dict) -> dict:
    """One command as a bare OP_MSG to one member: the exact lsid and txnNumber given, no retry."""
    body = struct.pack("<I", 0) + b"\x00" + bson.encode(cmd)
    with socket.create_connection(("127.0.0.1", port), timeout=15) as sock:
        sock.sendall(struct.pack("<iiii", 16 + len(body), 1, 0, 2013) + body)
        (length,) = struct.unpack("<i", recv_exactly(sock, 4))
        reply = recv_exactly(sock, length - 4)
    return bson.decode(reply[12 + 4 + 1:])


def reply_shape(reply: dict) -> dict:
    """A write's reply without what differs between any two answers (times, the primary's ids)."""
    return {k: v for k, v in reply.items() if k not in ("operationTime", "$clusterTime", "opTime", "electionId")}


def wait_new_primary(state: dict, old: int, timeout: float = 20) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for n in range(3):
            if n != old:
                hello = cluster._hello(state["port"] + n, 300)
                if hello and hello.get("isWritablePrimary"):
                    return n
        time.sleep(0.05)
    raise AssertionError("no new primary")




def catalog(client: pymongo.MongoClient, db: str) -> dict:
    out = {}
    for info in client[db].list_collections():
        indexes = [] if info.get("type") == "view" else sorted(
            (ix["name"], sorted(ix.items())) for ix in client[db][info["name"]].list_indexes())
        out[info["name"]] = (info.get("type"), info.get("options"), info.get("info", {}).get("uuid"), indexes)
    return out


def test_a_former_primary_rolls_back_its_catalog_changes(rs):
    old = cluster.wait_for_primary(rs, 15)
    primary = direct(rs, old)
    db = primary.get_database("ddl", write_concern=pymongo.WriteConcern("majority", wtimeout=15000))
    db.kept.insert_many([{"_id": i, "a": i} for i in range(5)])
    db.victim.insert_many([{"_id": i} for i in range(3)])
    db.command("collMod", "kept", validator={"a": {"$type": "int"}})
    others = [n for n in range(3) if n != old]
    for n in others:     # every secondary has it: applied collMod included
        assert wait_until(lambda n=n: catalog(direct(rs, n, readPreference="secondaryPreferred"), "ddl")
                          == catalog(primary, "ddl"), 10)
    before = catalog(primary, "ddl")
    for n in others:     # the secondaries freeze: the primary's next writes reach nobody
        os.kill(_pid(rs, str(n)), signal.SIGSTOP)
    try:
        time.sleep(1.0)   # their getMores in flight end (maxTimeMS 500) before the writes start
        w1 = primary.get_database("ddl", write_concern=pymongo.WriteConcern(w=1))
        w1.create_collection("born", capped=True, size=1 << 16)
        w1.born.insert_many([{"_id": i, "lost": True} for i in range(4)])
        w1.kept.create_index("a", unique=True)
        w1.command("collMod", "kept", validator={"a": {"$type": "string"}}, writeConcern={"w": 1})
        w1.victim.drop()
        w1.kept.rename("kept_renamed")
        os.kill(_pid(rs, str(old)), signal.SIGKILL)
    finally:
        for n in others:
            os.kill(_pid(rs, str(n)), signal.SIGCONT)
    new = wait_new_primary(rs, old)
    new_primary = direct(rs, new)
    new_primary.ddl.get_collection("kept", write_concern=pymongo.WriteConcern("majority")).insert_one({"_id": "after", "a": 99})
    cluster.restart_member(rs["dir"], old)
    rejoined = direct(rs, old, readPreference="secondaryPreferred")
    expected = catalog(new_primary, "ddl")
    assert set(expected) == set(before) and expected["kept"][1] == before["kept"][1]
    assert wait_until(lambda: catalog(rejoined, "ddl") == expected, 30), (catalog(rejoined, "ddl"), expected)
    assert sorted(d["_id"] for d in rejoined.ddl.victim.find()) == [0, 1, 2]
    assert rejoined.ddl.kept.count_documents({}) == 6
    files = list((Path(rs["dir"]) / f"member{old}" / "rollback").rglob("*.bson"))
    lost = [d for f in files for d in bson.decode_all(f.read_bytes())]
    assert sorted(d["_id"] for d in lost if d.get("lost")) == [0, 1, 2, 3]
    assert rejoined.admin.command("replSetGetStatus")["myState"] == 2
    log = (Path(rs["dir"]) / f"member{old}.log").read_text()
    assert "collections or databases copied again" in log


def test_a_retryable_write_retried_on_the_new_primary_answers_as_the_original(rs):
    old = cluster.wait_for_primary(rs, 15)
    port = rs["port"] + old
    majority = {"w": "majority", "wtimeout": 15000}
    writes = [
        {"insert": "retry", "documents": [{"_id": 1, "n": 0}, {"_id": 2, "n": 0}], "txnNumber": Int64(1)},
        {"update": "retry", "updates": [{"q": {"_id": 1}, "u": {"$inc": {"n": 1}}},
                                        {"q": {"_id": 3}, "u": {"$inc": {"n": 1}}, "upsert": True}],
         "txnNumber": Int64(2)},
        {"findAndModify": "retry", "query": {"_id": 2}, "update": {"$inc": {"n": 5}}, "new": False,
         "txnNumber": Int64(3)},
        {"findAndModify": "retry", "query": {"_id": 1}, "update": {"$inc": {"n": 7}}, "new": True,
         "txnNumber": Int64(4)},
        {"delete": "retry", "deletes": [{"q": {"_id": 3}, "limit": 1}], "txnNumber": Int64(5)},
    ]
    # a session keeps the record of its newest write only (mongod's config.transactions): a driver
    # retries its last write, so each write here is the last of its own session
    sessions = [{"id": Binary(uuid.uuid4().bytes, 4)} for _ in writes]
    originals = []
    for w, lsid in zip(writes, sessions):
        reply = command(port, {**w, "$db": "test", "lsid": lsid, "writeConcern": majority})
        assert reply["ok"] == 1.0 and "writeConcernError" not in reply, reply
        originals.append(reply)
    assert originals[2]["value"] == {"_id": 2, "n": 0} and originals[3]["value"] == {"_id": 1, "n": 8}
    killed = time.monotonic()
    os.kill(_pid(rs, str(old)), signal.SIGKILL)
    new = wait_new_primary(rs, old)
    print(f"\nnew primary {time.monotonic() - killed:.2f} s after kill -9")
    for w, lsid, original in zip(writes, sessions, originals):
        again = command(rs["port"] + new, {**w, "$db": "test", "lsid": lsid, "writeConcern": majority})
        assert reply_shape(again) == reply_shape(original), (w, again, original)
    docs = sorted(direct(rs, new).test.retry.find(), key=lambda d: d["_id"])
    assert docs == [{"_id": 1, "n": 8}, {"_id": 2, "n": 5}]            # nothing applied twice
    older = {**writes[0], "txnNumber": Int64(0)}
    stale = command(rs["port"] + new, {**older, "$db": "test", "lsid": sessions[0]})
    assert stale["codeName"] == "TransactionTooOld"
    cluster.restart_member(rs["dir"], old)
    rejoined = direct(rs, old, readPreference="secondaryPreferred")
    assert wait_until(lambda: rejoined.admin.command("hello").get("secondary"), 20)


def test_a_member_added_with_an_empty_data_directory_clones_the_set(rs):
    primary_n = cluster.wait_for_primary(rs, 15)
    client = pymongo.MongoClient(cluster.connection_string(rs), serverSelectionTimeoutMS=15000)
    db = client.get_database("clone")
    db.create_collection("capped", capped=True, size=1 << 20, max=500)
    db.create_collection("checked", validator={"n": {"$type": "int"}})
    db.create_collection("view", viewOn="checked", pipeline=[{"$match": {"n": {"$gt": 5}}}])
    db.checked.create_index([("n", 1)], unique=True, name="n_unique")
    db.checked.create_index([("tag", 1)], sparse=True)
    db.capped.insert_many([{"_id": i} for i in range(600)])
    for start in range(0, 4000, 2000):
        db.checked.insert_many([{"_id": i, "n": i, "pad": "x" * 100} for i in range(start, start + 2000)])
    client.other.things.insert_one({"_id": "x"})
    # a time-series collection: its buckets collection and the view on it are cloned
    db.create_collection("series", timeseries={"timeField": "at", "metaField": "k"})
    at = datetime.datetime(2026, 1, 1)
    db.series.insert_many([{"at": at + datetime.timedelta(seconds=i), "k": i % 4, "v": i} for i in range(300)])
    root = Path(rs["dir"])
    assert cluster._wait_port(rs["port"] + 3, 30)
    primary = direct(rs, primary_n)
    config = primary.admin.command("replSetGetConfig")["config"]
    config["version"] += 1
    config["members"].append({"_id": 3, "host": f"127.0.0.1:{rs['port'] + 3}", "priority": 0, "votes": 0})
    primary.admin.command("replSetReconfig", config)
    stop = threading.Event()

    def write_during_the_clone() -> None:    # the oplog from the clone's start is applied after it
        i = 0
        while not stop.is_set():
            db.checked.insert_one({"_id": f"during{i}", "n": 100000 + i})
            db.checked.update_one({"_id": 0}, {"$inc": {"n": -1}})
            i += 1
    writer = threading.Thread(target=write_during_the_clone)
    writer.start()
    added = direct(rs, 3, readPreference="secondaryPreferred")
    states, progress, killed_at = [], None, None
    started = time.monotonic()
    try:
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline:
            try:
                status = added.admin.command("replSetGetStatus")
            except pymongo.errors.PyMongoError:    # not yet in the set, or restarting
                time.sleep(0.05)
                continue
            if not states or states[-1] != status["myState"]:
                states.append(status["myState"])
            progress = status.get("initialSyncStatus", progress)
            if killed_at is None and progress is not None and progress["approxTotalDocumentsCopied"] > 0:
                # kill -9 in the middle of the clone: the restarted member starts it again cleanly
                os.kill(_pid(rs, "3"), signal.SIGKILL)
                killed_at = time.monotonic()
                # the file, not the fixture's dict, holds the current pids (members restarted by
                # earlier tests): saving the dict would leave those members running after stop
                state = cluster.load_state(rs["dir"])
                state["pids"]["3"] = cluster._spawn(cluster.member_argv(state, 3), root / "member3.log")
                cluster._save(state)
                states.append("killed")
                continue
            if status["myState"] == 2:
                break
            time.sleep(0.05)
    finally:
        stop.set()
        writer.join(10)
    synced = time.monotonic() - started
    assert killed_at is not None, states
    print(f"\ninitial sync of 4,600 documents, killed once mid-clone: SECONDARY {synced:.2f} s after "
          f"replSetReconfig, {time.monotonic() - killed_at:.2f} s after the restart; states {states}")
    assert states[-1] == 2 and states.count(5) == 2 and states.index("killed") > states.index(5), states
    assert progress is not None and progress["databases"]["databasesToClone"] >= 2
    for name in ("clone", "other", "test", "ddl"):
        assert wait_until(lambda name=name: catalog(added, name) == catalog(primary, name), 15), name
    expected = sorted(primary.clone.checked.find({}, {"pad": 0}), key=lambda d: str(d["_id"]))
    assert wait_until(lambda: sorted(added.clone.checked.find({}, {"pad": 0}), key=lambda d: str(d["_id"]))
                      == expected, 15)
    assert added.clone.capped.count_documents({}) == 500 and added.clone.view.count_documents({}) > 0
    assert added.other.things.find_one() == {"_id": "x"}
    assert (list(added.clone.series.find({}, {"_id": 0}).sort("v", 1))
            == list(primary.clone.series.find({}, {"_id": 0}).sort("v", 1)))
    assert added.clone.series.count_documents({"k": 1}) == 75
    # its oplog starts at the clone: the documents came by copy, not by replaying the history
    first = next(added.local["oplog.rs"].find({}).sort("$natural", 1).limit(1))
    assert first["ts"] > next(primary.local["oplog.rs"].find({}).sort("$natural", 1).limit(1))["ts"]
    config["version"] += 1
    config["members"] = config["members"][:3]
    primary.admin.command("replSetReconfig", config)
    client.close()
