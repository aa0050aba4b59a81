"""A three-member replica set on loopback (`ginkgodb cluster start`), driven with pymongo as a
mongod replica set: discovery, hello on every member, secondaries refusing writes and
primary-only reads, reads from secondaries (read preference and tags), replSetGetStatus and
replSetGetConfig, w: majority waiting for the secondaries, and failover under a write load
checked as a Jepsen-style history (docs/design/replication.md)."""
from __future__ import annotations

import os
import signal
import socket
import struct
import threading
import time

import bson
import pymongo
import pytest
from bson.objectid import ObjectId
from pymongo.read_concern import ReadConcern
from pymongo.read_preferences import Secondary, SecondaryPreferred
from pymongo.write_concern import WriteConcern
from support.etcd import ensure_etcd
from support.history import History, check
from support.sockets import free_port_range, recv_exactly
from support.timing import wait_until

from ginkgodb import cluster

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]
TAGS = [{"dc": "east"}, {"dc": "west"}, {"dc": "east", "rack": "b"}]


def _start(tmp_path, tags=None) -> dict:
    ensure_etcd()
    return cluster.start("rs0", 3, free_port_range(3), str(tmp_path / "rs"), tags)


@pytest.fixture(scope="module")
def rs(tmp_path_factory):
    state = _start(tmp_path_factory.mktemp("cluster"), TAGS)
    yield state
    cluster.stop(state["dir"])


def direct(state: dict, n: int, **kw) -> pymongo.MongoClient:
    return pymongo.MongoClient(f"127.0.0.1:{state['port'] + n}", directConnection=True,
                               serverSelectionTimeoutMS=5000, **kw)


def op_msg(port: int, cmd: dict) -> dict:
    """One command as a bare OP_MSG (no read preference added), its reply decoded."""
    body = struct.pack("<I", 0) + b"\x00" + bson.encode(cmd)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(struct.pack("<iiii", 16 + len(body), 1, 0, 2013) + body)
        (length,) = struct.unpack("<i", recv_exactly(sock, 4))
        reply = recv_exactly(sock, length - 4)
    return bson.decode(reply[12 + 4 + 1:])


def hosts(state: dict) -> list[str]:
    return [f"127.0.0.1:{state['port'] + n}" for n in range(3)]


def test_pymongo_discovers_the_set_and_every_member_says_hello_as_mongod(rs):
    client = pymongo.MongoClient(cluster.connection_string(rs), serverSelectionTimeoutMS=10000)
    client.admin.command("ping")
    deadline = time.time() + 10
    while len(client.secondaries) < 2 and time.time() < deadline:
        time.sleep(0.1)
    assert client.primary is not None and len(client.secondaries) == 2
    primary = f"{client.primary[0]}:{client.primary[1]}"
    for n in range(3):
        # a secondary learns the new primary asynchronously (as mongod's heartbeats), so wait for it
        member = direct(rs, n)
        hello = member.admin.command("hello")
        while "primary" not in hello and time.time() < deadline + 10:
            time.sleep(0.05)
            hello = member.admin.command("hello")
        assert hello["setName"] == "rs0" and hello["setVersion"] == 1
        assert hello["hosts"] == hosts(rs) and hello["me"] == hosts(rs)[n]
        assert hello["primary"] == primary
        assert hello["isWritablePrimary"] is (hosts(rs)[n] == primary)
        assert hello["secondary"] is (hosts(rs)[n] != primary)
        assert ("electionId" in hello) is hello["isWritablePrimary"]
        assert hello["tags"] == TAGS[n]
        assert set(hello["topologyVersion"]) == {"processId", "counter"}
        assert set(hello["lastWrite"]) == {"opTime", "lastWriteDate", "majorityOpTime", "majorityWriteDate"}
    client.close()


def test_secondaries_refuse_writes_and_primary_reads_and_serve_secondary_reads(rs):
    client = pymongo.MongoClient(cluster.connection_string(rs), serverSelectionTimeoutMS=10000)
    coll = client.test.get_collection("reads", write_concern=WriteConcern("majority", wtimeout=10000))
    coll.insert_many([{"_id": i, "dc": "x"} for i in range(10)])
    primary = cluster.wait_for_primary(rs, 10)
    secondary = next(n for n in range(3) if n != primary)
    with pytest.raises(pymongo.errors.NotPrimaryError) as write:
        direct(rs, secondary).test.reads.insert_one({"_id": 99})
    assert write.value.details["code"] == 10107 and write.value.details["codeName"] == "NotWritablePrimary"
    # pymongo marks every read on a direct connection secondaryOk: a plain OP_MSG has no read preference
    read = op_msg(rs["port"] + secondary, {"find": "reads", "$db": "test"})
    assert read["code"] == 13435 and read["codeName"] == "NotPrimaryNoSecondaryOk"
    assert op_msg(rs["port"] + secondary, {"find": "reads", "$db": "test",
                                           "$readPreference": {"mode": "secondaryPreferred"}})["ok"] == 1.0
    # w: majority returned, so a majority has it; secondaryPreferred reads a secondary
    deadline = time.time() + 5
    for n in range(3):
        member = direct(rs, n, readPreference="secondaryPreferred")
        while member.test.reads.count_documents({}) < 10 and time.time() < deadline:
            time.sleep(0.05)
    reader = client.test.get_collection("reads", read_preference=SecondaryPreferred())
    cursor = reader.find({})
    assert len(list(cursor)) == 10
    assert f"{cursor.address[0]}:{cursor.address[1]}" != hosts(rs)[primary]
    west = client.test.get_collection("reads", read_preference=Secondary(tag_sets=[{"dc": "west"}]))
    if primary != 1:   # member 1 is the only "west" one
        cursor = west.find({})
        assert len(list(cursor)) == 10 and cursor.address[1] == rs["port"] + 1
    client.close()


def test_read_concern_majority_sees_a_majority_committed_write(rs):
    client = pymongo.MongoClient(cluster.connection_string(rs), serverSelectionTimeoutMS=10000)
    client.test.get_collection("rcm", write_concern=WriteConcern(w=1)).insert_one({"_id": 1})
    majority = client.test.get_collection("rcm", read_concern=ReadConcern("majority"))
    assert majority.find_one({"_id": 1}) == {"_id": 1}     # waited until a majority had it
    status = client.admin.command("replSetGetStatus")
    committed, applied = status["optimes"]["lastCommittedOpTime"]["ts"], status["optimes"]["appliedOpTime"]["ts"]
    assert bson.Timestamp(0, 0) < committed <= applied
    client.close()


def test_the_node_driver_and_mongosh_use_the_set(rs, node_modules):
    import json
    import subprocess

    from e2e.npm_tools import mongosh_binary, run_json_script
    primary = cluster.wait_for_primary(rs, 10)
    out = run_json_script(node_modules, "node_multi_member.js", cluster.connection_string(rs))
    assert out["type"] == "ReplicaSetWithPrimary"
    types = {s["address"]: s["type"] for s in out["servers"]}
    assert sorted(types.values()) == ["RSPrimary", "RSSecondary", "RSSecondary"]
    assert {s["address"]: s["tags"] for s in out["servers"]} == dict(zip(hosts(rs), TAGS))
    assert out["secondaryDoc"] == {"_id": 1} and out["westDoc"] == {"_id": 1}
    assert out["addresses"][0] != hosts(rs)[primary]
    assert out["addresses"][1] == hosts(rs)[1] or primary == 1
    done = subprocess.run([str(mongosh_binary(node_modules)), "--quiet", cluster.connection_string(rs), "--eval",
                           "print(JSON.stringify({status: rs.status().members.map(m => m.stateStr), "
                           "conf: rs.conf().members.length, lag: rs.printSecondaryReplicationInfo() !== undefined}))"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    shown = json.loads(done.stdout.strip().splitlines()[-1])
    assert sorted(shown["status"]) == ["PRIMARY", "SECONDARY", "SECONDARY"] and shown["conf"] == 3
    assert shown["lag"] is True     # rs.printSecondaryReplicationInfo() ran on the status it got


def test_max_staleness_reads_choose_a_fresh_secondary(rs):
    uri = cluster.connection_string(rs) + "&readPreference=secondary&maxStalenessSeconds=90"
    client = pymongo.MongoClient(uri, serverSelectionTimeoutMS=10000)
    client.test.get_collection("stale", write_concern=WriteConcern("majority", wtimeout=10000)).insert_one({"_id": 1})
    cursor = client.test.stale.find({"_id": 1})
    assert list(cursor) == [{"_id": 1}]
    primary = cluster.wait_for_primary(rs, 10)
    assert cursor.address[1] != rs["port"] + primary
    client.close()


def test_replset_get_status_and_config(rs):
    primary = cluster.wait_for_primary(rs, 10)
    status = direct(rs, primary).admin.command("replSetGetStatus")
    assert status["set"] == "rs0" and status["myState"] == 1
    assert [m["name"] for m in status["members"]] == hosts(rs)
    deadline = time.time() + 5
    while time.time() < deadline and any(m["health"] != 1.0 for m in status["members"]):
        time.sleep(0.2)
        status = direct(rs, primary).admin.command("replSetGetStatus")
    assert sorted(m["stateStr"] for m in status["members"]) == ["PRIMARY", "SECONDARY", "SECONDARY"]
    assert status["majorityVoteCount"] == 2 and status["votingMembersCount"] == 3
    secondary = next(n for n in range(3) if n != primary)
    mine = direct(rs, secondary).admin.command("replSetGetStatus")
    assert mine["myState"] == 2 and mine["syncSourceHost"] == hosts(rs)[primary]
    config = direct(rs, secondary).admin.command("replSetGetConfig")["config"]
    assert config["_id"] == "rs0" and [m["host"] for m in config["members"]] == hosts(rs)
    assert [m["tags"] for m in config["members"]] == TAGS


def test_a_second_initiate_is_refused(rs):
    with pytest.raises(pymongo.errors.OperationFailure) as err:
        direct(rs, 2).admin.command("replSetInitiate", {"_id": "rs0", "members": [{"_id": 0, "host": hosts(rs)[2]}]})
    assert err.value.code == 23   # AlreadyInitialized


def test_a_transaction_commits_on_every_member(rs):
    client = pymongo.MongoClient(cluster.connection_string(rs), serverSelectionTimeoutMS=10000)
    client.test.txn.insert_one({"_id": "seed"})
    with client.start_session() as session:
        with session.start_transaction(write_concern=WriteConcern("majority", wtimeout=10000)):
            client.test.txn.insert_one({"_id": "a"}, session=session)
            client.test.txn.update_one({"_id": "seed"}, {"$set": {"n": 1}}, session=session)
    deadline = time.time() + 5
    for n in range(3):
        member = direct(rs, n, readPreference="secondaryPreferred").test.txn
        while member.count_documents({}) < 2 and time.time() < deadline:
            time.sleep(0.05)
        assert list(member.find({}, sort=[("_id", 1)])) == [{"_id": "a"}, {"_id": "seed", "n": 1}]


def test_step_down_hands_over_to_a_caught_up_secondary(rs):
    old = cluster.wait_for_primary(rs, 10)
    client = pymongo.MongoClient(cluster.connection_string(rs), serverSelectionTimeoutMS=15000)
    client.test.sd.insert_one({"_id": 1})
    direct(rs, old).admin.command("replSetStepDown", 30, secondaryCatchUpPeriodSecs=10)
    assert direct(rs, old).admin.command("hello")["isWritablePrimary"] is False
    started = time.monotonic()
    new = cluster.wait_for_primary(rs, 15)
    print(f"\nstepDown: member {new} primary {time.monotonic() - started:.2f} s after member {old} stepped down")
    assert new != old
    client.test.sd.insert_one({"_id": 2})     # the driver follows the new primary
    with pytest.raises(pymongo.errors.OperationFailure) as err:
        direct(rs, new).admin.command("replSetFreeze", 10)
    assert err.value.code == 95            # NotSecondary: a primary cannot be frozen
    assert direct(rs, old).admin.command("replSetFreeze", 0)["info"] == "unfreezing"
    client.close()


def test_a_change_stream_resumes_on_the_new_primary(rs):
    client = pymongo.MongoClient(cluster.connection_string(rs), serverSelectionTimeoutMS=15000)
    coll = client.test.get_collection("cs", write_concern=WriteConcern("majority", wtimeout=10000))
    coll.insert_one({"_id": "before"})
    with coll.watch() as stream:
        coll.insert_one({"_id": 1})
        first = stream.next()
        token = stream.resume_token
    assert first["documentKey"] == {"_id": 1}
    old = cluster.wait_for_primary(rs, 10)
    direct(rs, old).admin.command("replSetStepDown", 10, secondaryCatchUpPeriodSecs=10)
    new = cluster.wait_for_primary(rs, 15)
    assert new != old
    coll.insert_one({"_id": 2})
    with coll.watch(resume_after=token) as resumed:       # on the new primary, from the old one's token
        event = resumed.next()
    assert event["documentKey"] == {"_id": 2} and event["operationType"] == "insert"
    client.close()


def _stopped(pid: int) -> bool:
    """Every thread of the process is stopped (state T in /proc)."""
    tasks = os.listdir(f"/proc/{pid}/task")
    states = []
    for task in tasks:
        with open(f"/proc/{pid}/task/{task}/stat") as f:
            states.append(f.read().rpartition(")")[2].split()[0])
    return all(state in ("T", "t") for state in states)


def test_a_change_stream_shows_only_majority_committed_writes(rs):
    """As mongod's: a write the secondaries have not applied is no event yet (a failover could
    still roll it back); it becomes one once a majority has it, on the primary and on a secondary."""
    p = cluster.wait_for_primary(rs, 15)
    others = [n for n in range(3) if n != p]
    coll = direct(rs, p).test.get_collection("cs_majority", write_concern=WriteConcern(w=1))
    coll.with_options(write_concern=WriteConcern("majority", wtimeout=10000)).insert_one({"_id": "before"})
    secondary = direct(rs, others[0], readPreference="secondary").test.cs_majority
    with coll.watch(max_await_time_ms=100) as stream, secondary.watch(max_await_time_ms=100) as on_secondary:
        stream.try_next()
        on_secondary.try_next()
        pids = [int(rs["pids"][str(n)]) for n in others]
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        try:
            # kill() returns before every thread has stopped: a secondary could still apply the write
            assert wait_until(lambda: all(_stopped(pid) for pid in pids), 5)
            coll.insert_one({"_id": 1})                     # w: 1, on the primary alone
            held_until = time.monotonic() + 1.5
            while time.monotonic() < held_until:
                assert stream.try_next() is None, "an event for a write no majority has"
        finally:
            for pid in pids:
                os.kill(pid, signal.SIGCONT)
        resumed = time.monotonic()
        events: list = []
        for s in (stream, on_secondary):
            assert wait_until(lambda: events.append(s.try_next()) or events[-1] is not None, 10)  # noqa: B023
            print(f"\nthe event {time.monotonic() - resumed:.2f} s after the secondaries resumed")
    assert [e["documentKey"] for e in events if e] == [{"_id": 1}, {"_id": 1}]


def test_etcd_stopped_means_the_primary_steps_down_and_returns_with_etcd(rs):
    from ginkgodb.repl import LEASE_TTL
    primary = cluster.wait_for_primary(rs, 15)
    etcd_pid = int(rs["pids"]["etcd"])
    os.kill(etcd_pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        while time.monotonic() - started < LEASE_TTL + 3:
            if not (cluster._hello(rs["port"] + primary, 300) or {}).get("isWritablePrimary"):
                break
            time.sleep(0.05)
        stepped = time.monotonic() - started
        print(f"\netcd stopped: the primary stepped down after {stepped:.2f} s")
        assert stepped < LEASE_TTL                 # before its lease can have expired in etcd
        time.sleep(1)
        assert not any((cluster._hello(rs["port"] + n, 300) or {}).get("isWritablePrimary") for n in range(3))
    finally:
        os.kill(etcd_pid, signal.SIGCONT)
    cluster.wait_for_primary(rs, 20)


def test_w_majority_waits_for_the_secondaries(tmp_path):
    state = _start(tmp_path)
    try:
        primary = cluster.wait_for_primary(state, 10)
        client = direct(state, primary)
        coll = client.test.wc
        coll.with_options(write_concern=WriteConcern("majority", wtimeout=5000)).insert_one({"_id": 1})
        for n in range(3):
            if n != primary:
                os.kill(int(state["pids"][str(n)]), signal.SIGSTOP)   # the secondaries stall
        try:
            started = time.monotonic()
            with pytest.raises(pymongo.errors.WriteConcernError) as err:
                coll.with_options(write_concern=WriteConcern("majority", wtimeout=700)).insert_one({"_id": 2})
            assert 0.6 < time.monotonic() - started < 5
            assert err.value.code == 64 and err.value.details["codeName"] == "WriteConcernFailed"
            assert err.value.details["errInfo"]["wtimeout"] is True
            coll.with_options(write_concern=WriteConcern(w=1)).insert_one({"_id": 3})   # w: 1 does not wait
            with pytest.raises(pymongo.errors.WriteConcernError) as too_many:
                coll.with_options(write_concern=WriteConcern(w=4)).insert_one({"_id": 4})
            assert too_many.value.code == 100
        finally:
            for n in range(3):
                if n != primary:
                    os.kill(int(state["pids"][str(n)]), signal.SIGCONT)
        coll.with_options(write_concern=WriteConcern(w=3, wtimeout=10000)).insert_one({"_id": 5})
        for n in range(3):
            assert direct(state, n, readPreference="secondaryPreferred").test.wc.count_documents({}) == 5
        # the whole set stopped and started again in its directory keeps its configuration and data
        cluster.stop(state["dir"])
        state = cluster.start("rs0", 3, state["port"], state["dir"])
        restarted = direct(state, cluster.wait_for_primary(state, 15))
        assert restarted.test.wc.count_documents({}) == 5
        restarted.test.wc.insert_one({"_id": 6})
    finally:
        cluster.stop(state["dir"])


def _writer(uri: str, process: int, history: History, stop: threading.Event) -> None:
    client = pymongo.MongoClient(uri, retryWrites=False, serverSelectionTimeoutMS=15000, socketTimeoutMS=5000)
    coll = client.test.get_collection("load", write_concern=WriteConcern("majority", wtimeout=5000))
    while not stop.is_set():
        value = str(ObjectId())
        history.record(process, "invoke", value)
        try:
            coll.insert_one({"_id": value, "p": process})
            history.record(process, "ok", value)
        except (pymongo.errors.ConnectionFailure, pymongo.errors.WriteConcernError,
                pymongo.errors.ServerSelectionTimeoutError) as exc:
            history.record(process, "info", value, str(exc)[:100])
        except pymongo.errors.NotPrimaryError as exc:   # refused before it ran
            history.record(process, "fail", value, str(exc)[:100])
        except pymongo.errors.PyMongoError as exc:
            history.record(process, "info", value, str(exc)[:100])
    client.close()


def test_failover_under_load_loses_no_acknowledged_write(tmp_path):
    state = _start(tmp_path)
    try:
        uri = cluster.connection_string(state)
        old = cluster.wait_for_primary(state, 10)
        history, stop = History(), threading.Event()
        writers = [threading.Thread(target=_writer, args=(uri, p, history, stop)) for p in range(4)]
        for w in writers:
            w.start()
        time.sleep(2)
        killed_at = time.monotonic()
        os.kill(int(state["pids"][str(old)]), signal.SIGKILL)
        new = None
        while time.monotonic() - killed_at < 20:
            for n in range(3):
                if n != old:
                    hello = cluster._hello(state["port"] + n, 300)
                    if hello and hello.get("isWritablePrimary"):
                        new = n
            if new is not None:
                break
            time.sleep(0.05)
        failover = time.monotonic() - killed_at
        acked_before = len(history.ids("ok"))
        time.sleep(2)     # writes continue on the new primary
        stop.set()
        for w in writers:
            w.join(30)
        print(f"\nfailover: new primary (member {new}) {failover:.2f} s after kill -9 of member {old}")
        assert new is not None and failover < 10
        assert len(history.ids("ok")) > acked_before > 0
        survivors = [n for n in range(3) if n != old]
        held = {}
        deadline = time.time() + 10
        for n in survivors:
            member = direct(state, n, readPreference="secondaryPreferred")
            while time.time() < deadline:   # the secondary applies the last entries
                held[f"member{n}"] = {d["_id"] for d in member.test.load.find({}, {"_id": 1})}
                if history.ids("ok") <= held[f"member{n}"]:
                    break
                time.sleep(0.1)
        verdict = check(history, held)
        print(verdict)
        assert verdict.valid, str(verdict)
        # the old primary rejoins: its writes that never reached a majority roll back, and all
        # three members converge on the new primary's data
        cluster.restart_member(state["dir"], old)
        primary_ids = {d["_id"] for d in direct(state, new).test.load.find({}, {"_id": 1})}
        rejoined = direct(state, old, readPreference="secondaryPreferred")
        deadline = time.time() + 30
        while time.time() < deadline:
            held[f"member{old}"] = {d["_id"] for d in rejoined.test.load.find({}, {"_id": 1})}
            if held[f"member{old}"] == primary_ids:
                break
            time.sleep(0.2)
        assert held[f"member{old}"] == primary_ids
        verdict = check(history, held)
        assert verdict.valid, str(verdict)
        files = list((tmp_path / "rs" / f"member{old}" / "rollback").rglob("removed.*.bson"))
        rolled_back = [d["_id"] for f in files for d in bson.decode_all(f.read_bytes())]
        print(f"rejoined after kill -9: {len(rolled_back)} unreplicated writes rolled back to files")
        assert not set(rolled_back) & history.ids("ok")    # only writes nobody was told were done
        status = direct(state, old).admin.command("replSetGetStatus")
        assert status["myState"] == 2 and status["syncSourceHost"] == hosts(state)[new]
    finally:
        cluster.stop(state["dir"])


def test_reconfig_adds_a_member_that_syncs_and_removes_it(tmp_path):
    ensure_etcd()
    state = cluster.start("rs0", 3, free_port_range(4), str(tmp_path / "rs"))
    try:
        client = pymongo.MongoClient(cluster.connection_string(state), serverSelectionTimeoutMS=15000)
        client.test.grow.insert_many([{"_id": i} for i in range(100)])
        client.test.grow.create_index("x")
        state["pids"]["3"] = cluster._spawn(cluster.member_argv(state, 3), tmp_path / "rs" / "member3.log")
        cluster._save(state)
        assert cluster._wait_port(state["port"] + 3, 30)
        primary = direct(state, cluster.wait_for_primary(state, 10))
        config = primary.admin.command("replSetGetConfig")["config"]
        new_host = f"127.0.0.1:{state['port'] + 3}"
        config["version"] += 1
        config["members"].append({"_id": 3, "host": new_host})
        primary.admin.command("replSetReconfig", config)
        with pytest.raises(pymongo.errors.OperationFailure) as stale:
            primary.admin.command("replSetReconfig", config)
        assert stale.value.code == 103
        added = direct(state, 3, readPreference="secondaryPreferred")

        def count() -> int:
            try:
                return added.test.grow.count_documents({})
            except pymongo.errors.NotPrimaryError:    # 13436 until it has adopted the configuration
                return -1
        deadline = time.time() + 20
        while time.time() < deadline and count() < 100:
            time.sleep(0.1)
        assert added.test.grow.count_documents({}) == 100      # initial sync: the oplog from its start
        assert "x_1" in added.test.grow.index_information()
        hello = added.admin.command("hello")
        assert hello["secondary"] is True and new_host in hello["hosts"] and hello["setVersion"] == config["version"]
        deadline = time.time() + 10
        while time.time() < deadline and new_host not in primary.admin.command("hello")["hosts"]:
            time.sleep(0.1)
        # w: 4 now reaches the new member too
        client.test.get_collection("grow", write_concern=WriteConcern(w=4, wtimeout=10000)).insert_one({"_id": "w4"})
        config["version"] += 1
        config["members"] = config["members"][:3]
        primary.admin.command("replSetReconfig", config)
        deadline = time.time() + 10
        while time.time() < deadline and added.admin.command("hello").get("setName"):
            time.sleep(0.1)
        removed = added.admin.command("hello")
        assert "setName" not in removed and removed["isWritablePrimary"] is False
    finally:
        cluster.stop(state["dir"])


def test_a_primary_cut_off_from_etcd_steps_down_without_split_brain(tmp_path):
    from support.tcp_proxy import TcpProxy

    from ginkgodb.repl import LEASE_TTL
    ensure_etcd()
    proxies: dict[int, TcpProxy] = {}

    def through_proxy(n: int, url: str) -> str:
        host, port = url.rsplit("/", 1)[-1].split(":")
        proxies[n] = TcpProxy(host, int(port))
        return proxies[n].url
    state = cluster.start("rs0", 3, free_port_range(3), str(tmp_path / "rs"), member_etcd=through_proxy)
    try:
        uri = cluster.connection_string(state)
        old = cluster.wait_for_primary(state, 10)
        history, stop = History(), threading.Event()
        writers = [threading.Thread(target=_writer, args=(uri, p, history, stop)) for p in range(3)]
        for w in writers:
            w.start()
        primaries_seen: list[set] = []

        def watch() -> None:
            while not stop.is_set():
                primaries_seen.append({n for n in range(3)
                                       if (cluster._hello(state["port"] + n, 200) or {}).get("isWritablePrimary")})
                time.sleep(0.05)
        watcher = threading.Thread(target=watch)
        watcher.start()
        time.sleep(1.5)
        proxies[old].cut()                    # the primary loses etcd; clients and members still reach it
        cut_at = time.monotonic()
        while (cluster._hello(state["port"] + old, 300) or {}).get("isWritablePrimary"):
            time.sleep(0.05)
        stepped_down = time.monotonic() - cut_at
        new = cluster.wait_for_primary(state, 15)
        elected = time.monotonic() - cut_at
        time.sleep(1.5)
        proxies[old].heal()
        time.sleep(1.5)
        stop.set()
        for w in writers + [watcher]:
            w.join(30)
        print(f"\npartition from etcd: old primary stepped down after {stepped_down:.2f} s, member {new} "
              f"primary after {elected:.2f} s")
        assert stepped_down < LEASE_TTL and new != old
        assert all(len(seen) <= 1 for seen in primaries_seen), "two primaries at once"
        primary_ids = {d["_id"] for d in direct(state, new).test.load.find({}, {"_id": 1})}
        held = {}
        for n in range(3):
            member = direct(state, n, readPreference="secondaryPreferred")
            deadline = time.time() + 20
            while time.time() < deadline:
                held[f"member{n}"] = {d["_id"] for d in member.test.load.find({}, {"_id": 1})}
                if held[f"member{n}"] == primary_ids:
                    break
                time.sleep(0.2)
        verdict = check(history, held)
        print(verdict)
        assert verdict.valid, str(verdict)
        assert all(ids == primary_ids for ids in held.values())      # converged, the old primary included
    finally:
        cluster.stop(state["dir"])
        for proxy in proxies.values():
            proxy.close()


def test_a_hidden_delayed_member_is_never_chosen_and_applies_late(tmp_path):
    ensure_etcd()
    state = cluster.start("rs0", 3, free_port_range(3), str(tmp_path / "rs"))
    try:
        primary_n = cluster.wait_for_primary(state, 10)
        delayed_n = next(n for n in range(3) if n != primary_n)
        primary = direct(state, primary_n)
        config = primary.admin.command("replSetGetConfig")["config"]
        config["version"] += 1
        member = config["members"][delayed_n]
        member.update({"priority": 0, "hidden": True, "secondaryDelaySecs": 3})
        primary.admin.command("replSetReconfig", config)
        delayed = direct(state, delayed_n, readPreference="secondaryPreferred")
        deadline = time.time() + 10
        while time.time() < deadline and not delayed.admin.command("hello").get("hidden"):
            time.sleep(0.1)
        hello = delayed.admin.command("hello")
        assert hello["hidden"] is True and hello["passive"] is True and hello["secondaryDelaySecs"] == 3
        assert hosts(state)[delayed_n] not in primary.admin.command("hello")["hosts"]
        client = pymongo.MongoClient(cluster.connection_string(state), serverSelectionTimeoutMS=10000)
        time.sleep(1)
        written = time.monotonic()
        client.test.get_collection("late", write_concern=WriteConcern(w=1)).insert_one({"_id": 1})
        time.sleep(1)
        assert delayed.test.late.find_one({"_id": 1}) is None           # not yet: 3 s behind
        while delayed.test.late.find_one({"_id": 1}) is None and time.monotonic() - written < 15:
            time.sleep(0.1)
        assert 2.5 < time.monotonic() - written < 15
        for _ in range(10):       # reads with a secondary read preference never go to the hidden member
            cursor = client.test.get_collection("late", read_preference=Secondary()).find({})
            list(cursor)
            assert cursor.address[1] != state["port"] + delayed_n
        client.close()
    finally:
        cluster.stop(state["dir"])
