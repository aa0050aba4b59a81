"""`ginkgodb serve --workers 2`: two server processes on one port and one data directory.

Requests that continue state held by one process (a getMore, killCursors, a transaction's
statements) must reach it wherever they arrive. Raw OP_MSG connections make the routing
deterministic: each one is known to reach a given worker (serverStatus' pid), so a cursor
opened on one and continued on the other exercises forwarding every time.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import bson
import pymongo
import pytest
from bson import Binary, Int64

from ginkgodb.engine import cursor_worker
from ginkgodb.errors import StorageError
from ginkgodb.server.config import ServerConfig
from ginkgodb.server.routing import BROADCAST, LOCAL, SPLIT, WorkerSeat, route, session_worker
from ginkgodb.server.worker_spec import decode_spec, encode_spec
from ginkgodb.storage.lmdb_engine import LmdbEngine, lock_directory
from ginkgodb.wire.op_msg import encode_op_msg

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="--workers needs SO_REUSEPORT (Linux)")

ROOT = Path(__file__).resolve().parents[3]


# -- the routing rules (pure) ------------------------------------------------------------------
def _cid(worker: int) -> int:
    return (worker << 55) | 12345


def test_route_follows_cursor_ids_and_sessions():
    assert route({"getMore": Int64(_cid(1)), "collection": "c"}, 0, 2) == 1
    assert route({"getMore": Int64(_cid(0)), "collection": "c"}, 0, 2) == LOCAL
    assert route({"getMore": "x"}, 0, 2) == LOCAL            # the local worker reports the bad type
    assert route({"killCursors": "c", "cursors": [_cid(1)]}, 0, 2) == 1
    assert route({"killCursors": "c", "cursors": [_cid(0), _cid(1)]}, 0, 2) == SPLIT
    lsid = {"id": Binary(uuid.uuid4().bytes, 4)}
    owner = session_worker(lsid, 2)
    assert owner == session_worker({"id": Binary(bytes(lsid["id"]), 4)}, 2)   # stable across processes
    expected = LOCAL if owner == 0 else owner
    assert route({"insert": "c", "lsid": lsid, "txnNumber": Int64(1)}, 0, 2) == expected
    assert route({"commitTransaction": 1, "lsid": lsid, "txnNumber": Int64(1)}, 0, 2) == expected
    assert route({"find": "c", "lsid": lsid}, 0, 2) == LOCAL   # no transaction: anywhere
    for command in ({"endSessions": [lsid]}, {"setParameter": 1, "quiet": True}, {"profile": 1},
                    {"configureFailPoint": "x", "mode": "off"}, {"fsync": 1, "lock": True}, {"fsyncUnlock": 1}):
        assert route(command, 0, 2) == BROADCAST
    assert route({"profile": -1}, 0, 2) == LOCAL
    assert route({"fsync": 1}, 0, 2) == LOCAL


def test_worker_spec_round_trip():
    config = ServerConfig(port=1234, bind=("127.0.0.1", "::1"), dbpath="d", workers=2, command_threads=3,
                          set_parameters=(("quiet", "1"),), tls_disabled_protocols=("TLS1_0",), argv=("ginkgodb",))
    seat = WorkerSeat(index=1, count=2, socket_dir="s", lock_fds=(5, 6), ready_fd=7, parent_pid=8)
    assert decode_spec(encode_spec(config, seat)) == (config, seat)


def test_inherited_lock_shares_the_directory_with_siblings_only(tmp_path):
    path = str(tmp_path / "d")
    held = lock_directory(path)   # what the supervisor takes
    try:
        with pytest.raises(StorageError) as refused:
            LmdbEngine(path, map_size=1 << 26, shared=True, sync_interval=0)
        assert refused.value.kind == "locked"
        worker = LmdbEngine(path, map_size=1 << 26, shared=True, sync_interval=0,
                            held_locks=tuple(os.dup(fd) for fd in held))   # what a worker inherits
        with worker.writer() as txn:
            txn.put(b"k", b"v")
        worker.close()                # lets go of its copies, never of the supervisor's lock
        with pytest.raises(StorageError):
            LmdbEngine(path, map_size=1 << 26, shared=True, sync_interval=0)
    finally:
        for fd in held:
            os.close(fd)
    LmdbEngine(path, map_size=1 << 26, shared=False, sync_interval=0).close()   # free once it is gone


# -- a two-worker server -----------------------------------------------------------------------
def _start(path: Path, *extra: str) -> tuple[subprocess.Popen, int]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "ginkgodb.cli", "serve", "--port", "0", "--dbpath", str(path),
                             "--workers", "2", "--quiet", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    seen = []
    assert proc.stdout is not None
    for line in proc.stdout:
        seen.append(line)
        if '"Waiting for connections"' in line:
            threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()  # type: ignore
            return proc, int(json.loads(line)["attr"]["port"])
    raise AssertionError("the server did not start:\n" + "".join(seen[-20:]))


def _stop(proc: subprocess.Popen) -> int:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            return proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
    return proc.wait()


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(p) for p in f.read().split()]


class Raw:
    """One wire connection speaking OP_MSG: whichever worker the kernel gave it."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        self._ids = iter(range(1, 1 << 30))
        self.pid = self.command({"serverStatus": 1, "$db": "admin"})["pid"]

    def command(self, doc: dict[str, Any]) -> dict[str, Any]:
        self.sock.sendall(encode_op_msg(doc, next(self._ids), 0))
        head = self._read(16)
        length = struct.unpack("<i", head[:4])[0]
        body = self._read(length - 16)
        return bson.decode(body[5:])

    def _read(self, n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            assert chunk, "connection closed"
            out += chunk
        return out

    def close(self) -> None:
        self.sock.close()


def _one_per_worker(port: int, patience: float = 10.0) -> tuple[Raw, Raw]:
    """Connections to two different workers (the kernel's choice: try until both are hit;
    a restarted worker takes a while to listen again)."""
    found: dict[int, Raw] = {}
    spare = []
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        conn = Raw(port)
        if conn.pid in found:
            spare.append(conn)
        else:
            found[conn.pid] = conn
        if len(found) == 2:
            break
    for conn in spare:
        conn.close()
    assert len(found) == 2, "connections never reached a second worker"
    a, b = found.values()
    return a, b


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    proc, port = _start(tmp_path_factory.mktemp("workers"))
    try:
        client = pymongo.MongoClient("127.0.0.1", port, maxPoolSize=100)
        client.t.c.insert_many([{"_id": i, "v": i % 7} for i in range(300)])
        yield proc, port, client
        client.close()
    finally:
        assert _stop(proc) == 0


@pytest.fixture
def pair(server):
    a, b = _one_per_worker(server[1])
    yield a, b
    a.close()
    b.close()


def _find(conn: Raw, batch: int, **more: Any) -> dict:
    reply = conn.command({"find": "c", "$db": "t", "sort": {"_id": 1}, "batchSize": batch, **more})
    assert reply["ok"] == 1, reply
    return reply["cursor"]


def test_cursor_ids_name_their_worker(pair):
    a, b = pair
    ids = {_find(a, 2)["id"], _find(b, 2)["id"]}
    assert {cursor_worker(cid) for cid in ids} == {0, 1}


def test_getmore_reaches_the_owner(pair):
    a, b = pair
    cursor = _find(a, 5)
    got = [d["_id"] for d in cursor["firstBatch"]]
    cid = cursor["id"]
    while cid:
        reply = b.command({"getMore": cid, "collection": "c", "$db": "t", "batchSize": 40})
        assert reply["ok"] == 1, reply
        got += [d["_id"] for d in reply["cursor"]["nextBatch"]]
        cid = reply["cursor"]["id"]
    assert got == list(range(300))


def test_killcursors_of_the_other_worker(pair):
    a, b = pair
    cid = _find(a, 2)["id"]
    reply = b.command({"killCursors": "c", "cursors": [cid], "$db": "t"})
    assert reply["cursorsKilled"] == [cid]
    gone = a.command({"getMore": cid, "collection": "c", "$db": "t"})
    assert gone["code"] == 43 and gone["codeName"] == "CursorNotFound"


def test_killcursors_of_both_workers_in_one_command(pair):
    a, b = pair
    mine, theirs = _find(a, 2)["id"], _find(b, 2)["id"]
    reply = a.command({"killCursors": "c", "cursors": [mine, theirs, Int64(_cid(1) + 7)], "$db": "t"})
    assert sorted(reply["cursorsKilled"]) == sorted([mine, theirs])
    assert reply["cursorsNotFound"] == [_cid(1) + 7]
    assert reply["ok"] == 1


def _txn(lsid: dict, number: int, first: bool = False) -> dict:
    fields: dict[str, Any] = {"lsid": lsid, "txnNumber": Int64(number), "autocommit": False}
    if first:
        fields["startTransaction"] = True
    return fields


@pytest.mark.parametrize("ending", ["commitTransaction", "abortTransaction"])
def test_transaction_statements_on_both_workers(pair, server, ending):
    a, b = pair
    lsid = {"id": Binary(uuid.uuid4().bytes, 4)}
    coll = f"txn_{ending}"
    assert a.command({"insert": coll, "documents": [{"_id": 1}], "$db": "t", **_txn(lsid, 1, True)})["ok"] == 1
    assert b.command({"insert": coll, "documents": [{"_id": 2}], "$db": "t", **_txn(lsid, 1)})["ok"] == 1
    inside = a.command({"find": coll, "$db": "t", **_txn(lsid, 1)})
    assert [d["_id"] for d in inside["cursor"]["firstBatch"]] == [1, 2]
    client = server[2]
    assert client.t[coll].count_documents({}) == 0          # nothing visible before the end
    ended = b.command({ending: 1, "$db": "admin", **_txn(lsid, 1)})
    assert ended["ok"] == 1, ended
    expected = [1, 2] if ending == "commitTransaction" else []
    assert sorted(d["_id"] for d in client.t[coll].find()) == expected


def test_change_stream_continued_on_the_other_worker(pair, server):
    a, b = pair
    opened = a.command({"aggregate": "cs", "pipeline": [{"$changeStream": {}}], "cursor": {}, "$db": "t"})
    assert opened["ok"] == 1, opened
    cid = opened["cursor"]["id"]
    server[2].t.cs.insert_one({"_id": "event"})
    events: list = []
    deadline = time.monotonic() + 30
    while not events and time.monotonic() < deadline:
        reply = b.command({"getMore": cid, "collection": "cs", "$db": "t", "maxTimeMS": 500})
        assert reply["ok"] == 1, reply
        events = reply["cursor"]["nextBatch"]
    assert [e["documentKey"] for e in events] == [{"_id": "event"}]


def test_set_parameter_holds_on_every_worker(pair):
    a, b = pair
    try:
        assert a.command({"setParameter": 1, "ttlMonitorSleepSecs": 33, "$db": "admin"})["ok"] == 1
        got = b.command({"getParameter": 1, "ttlMonitorSleepSecs": 1, "$db": "admin"})
        assert got["ttlMonitorSleepSecs"] == 33
    finally:
        a.command({"setParameter": 1, "ttlMonitorSleepSecs": 60, "$db": "admin"})


def test_end_sessions_ends_a_transaction_held_elsewhere(pair):
    a, b = pair
    lsid = {"id": Binary(uuid.uuid4().bytes, 4)}
    assert a.command({"insert": "ended", "documents": [{"_id": 1}], "$db": "t", **_txn(lsid, 1, True)})["ok"] == 1
    for conn in (a, b):   # from either worker, the session's owner ends it
        assert conn.command({"endSessions": [lsid], "$db": "admin"})["ok"] == 1
    late = b.command({"commitTransaction": 1, "$db": "admin", **_txn(lsid, 1)})
    assert late["ok"] == 0 and late["codeName"] == "NoSuchTransaction"
    assert a.command({"count": "ended", "$db": "t"})["n"] == 0


def test_pymongo_pool_of_many_connections(server):
    client = server[2]
    errors: list[str] = []

    def reads() -> None:
        try:
            for i in range(6):
                got = [d["_id"] for d in client.t.c.find({"v": i % 7}, batch_size=3).sort("_id")]
                assert got == [n for n in range(300) if n % 7 == i % 7]
        except Exception as exc:
            errors.append(repr(exc))

    def transfers(k: int) -> None:
        try:
            for j in range(5):
                with client.start_session() as session:
                    def move(s, tag=f"{k}-{j}"):
                        client.t.bank.insert_one({"_id": f"{tag}-a"}, session=s)
                        client.t.bank.insert_one({"_id": f"{tag}-b"}, session=s)
                        client.t.bank.update_one({"_id": "total"}, {"$inc": {"n": 2}}, upsert=True, session=s)
                    session.with_transaction(move)
        except Exception as exc:
            errors.append(repr(exc))

    threads = [threading.Thread(target=reads) for _ in range(6)] + \
              [threading.Thread(target=transfers, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert errors == []
    assert client.t.bank.count_documents({"_id": {"$ne": "total"}}) == 30
    assert client.t.bank.find_one({"_id": "total"})["n"] == 30


def test_supervisor_restarts_a_killed_worker_and_stops_on_sigterm(tmp_path):
    proc, port = _start(tmp_path / "data")
    try:
        workers = _children(proc.pid)
        assert len(workers) == 2
        with pytest.raises(StorageError) as refused:   # the supervisor keeps everyone else out
            LmdbEngine(str(tmp_path / "data"), shared=True, sync_interval=0)
        assert refused.value.kind == "locked"
        client = pymongo.MongoClient("127.0.0.1", port, serverSelectionTimeoutMS=60_000)
        client.t.c.insert_one({"_id": 1})
        os.kill(workers[0], signal.SIGKILL)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            now = _children(proc.pid)
            if len(now) == 2 and workers[0] not in now:
                break
            time.sleep(0.2)
        replaced = _children(proc.pid)
        assert len(replaced) == 2 and workers[0] not in replaced and workers[1] in replaced
        a, b = _one_per_worker(port, patience=120)   # the new worker answers once it listens again
        assert {a.pid, b.pid} == set(replaced)
        for conn in (a, b):
            assert conn.command({"count": "c", "$db": "t"})["n"] == 1
            conn.close()
        client.close()
    finally:
        code = _stop(proc)
    assert code == 0
    for pid in replaced:
        assert not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z"


def test_workers_refuse_what_they_cannot_share(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "ginkgodb.cli", "serve", "--in-memory", "--workers", "2"],
                         capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 2 and "needs a data directory" in out.stderr


def test_current_op_and_kill_op_reach_every_worker(pair):
    a, b = pair
    opened = b.command({"aggregate": "waits", "pipeline": [{"$changeStream": {}}], "cursor": {}, "$db": "t"})
    cid = opened["cursor"]["id"]
    answer: list[dict] = []
    waiter = threading.Thread(target=lambda: answer.append(
        b.command({"getMore": cid, "collection": "waits", "$db": "t", "maxTimeMS": 8_000})))
    waiter.start()
    deadline = time.monotonic() + 30
    waiting: list[dict] = []
    while not waiting and time.monotonic() < deadline:
        ops = a.command({"currentOp": 1, "$db": "admin"})["inprog"]
        waiting = [op for op in ops if op.get("command", {}).get("getMore") == cid]
        time.sleep(0.05)
    assert {op["opid"] % 2 for op in ops} == {0, 1}   # both workers answered
    assert len(waiting) == 1
    opid = waiting[0]["opid"]
    assert not waiting[0]["killPending"]
    assert a.command({"killOp": 1, "op": opid, "$db": "admin"})["ok"] == 1
    ops = a.command({"currentOp": 1, "$db": "admin"})["inprog"]
    assert [op["killPending"] for op in ops if op["opid"] == opid] in ([True], [])   # [] once it ended
    waiter.join(60)
    assert answer and (answer[0]["ok"] == 1 or answer[0]["codeName"] == "Interrupted"), answer


def test_retryable_write_retried_on_the_other_worker(pair):
    a, b = pair
    lsid = {"id": Binary(uuid.uuid4().bytes, 4)}
    write = {"insert": "retried", "documents": [{"_id": 1, "n": 1}], "$db": "t", "lsid": lsid, "txnNumber": Int64(3)}
    first = a.command(dict(write))
    again = b.command(dict(write))        # the driver's retry, on another connection
    assert first["ok"] == 1 and first["n"] == 1
    assert again["ok"] == 1 and again["n"] == 1 and "writeErrors" not in again   # answered, not run again
    bump = {"update": "retried", "updates": [{"q": {"_id": 1}, "u": {"$inc": {"n": 1}}}], "$db": "t",
            "lsid": lsid, "txnNumber": Int64(4)}
    for conn in (b, a, b):
        assert conn.command(dict(bump))["nModified"] == 1
    assert a.command({"find": "retried", "$db": "t"})["cursor"]["firstBatch"] == [{"_id": 1, "n": 2}]


def test_a_port_held_by_another_workers_server_is_refused(server, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "ginkgodb.cli", "serve", "--port", str(server[1]), "--dbpath",
                          str(tmp_path / "other"), "--workers", "2", "--quiet"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 48 and "Failed to listen" in out.stderr


def test_the_shutdown_command_stops_every_worker(tmp_path):
    proc, port = _start(tmp_path / "data")
    try:
        workers = _children(proc.pid)
        client = pymongo.MongoClient("127.0.0.1", port, serverSelectionTimeoutMS=5_000)
        with pytest.raises(pymongo.errors.PyMongoError):   # the connection closes without a reply
            client.admin.command("shutdown")
        client.close()
        assert proc.wait(120) == 0
    finally:
        _stop(proc)
    for pid in workers:
        assert not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z"
