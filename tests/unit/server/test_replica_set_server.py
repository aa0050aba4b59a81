"""`ginkgodb serve --replSet rs0` with pymongo: a replica set of one that drivers discover as
ReplicaSetWithPrimary and monitor with the streaming (awaitable, exhaust) hello; fail points
that act on the connection; the configuration kept across restarts."""
from __future__ import annotations

import logging
import socket
import subprocess
import sys
import threading
import time

import bson
import pymongo
import pytest
from pymongo import monitoring
from pymongo.errors import AutoReconnect
from support.sockets import recv_exactly

from ginkgodb.commands import PARAMETERS
from ginkgodb.commands.fail_points import FAIL_POINTS
from ginkgodb.server.lifecycle import member_host
from ginkgodb.server.testing import running_server


class Heartbeats(monitoring.ServerHeartbeatListener):
    def __init__(self) -> None:
        self.succeeded_events: list = []
        self.failed_events: list = []

    def started(self, event) -> None:
        pass

    def succeeded(self, event) -> None:
        self.succeeded_events.append(event)

    def failed(self, event) -> None:
        self.failed_events.append(event)


def _initiate(host, port):
    with pymongo.MongoClient(host, port, directConnection=True) as c:
        return c.admin.command("replSetInitiate")


def _wait(predicate, seconds=5.0):
    until = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > until:
            return False
        time.sleep(0.02)
    return True


@pytest.fixture
def member():
    with running_server(None, repl_set="rs0") as (host, port):
        _initiate(host, port)
        yield host, port


def test_pymongo_discovers_a_primary_and_streams_hello_without_errors(member, caplog):
    host, port = member
    beats = Heartbeats()
    caplog.set_level(logging.DEBUG, logger="pymongo")
    with pymongo.MongoClient(f"mongodb://{host}:{port}/?replicaSet=rs0",
                             heartbeatFrequencyMS=500, event_listeners=[beats]) as client:
        client.test.c.insert_one({"a": 1})
        assert client.topology_description.topology_type_name == "ReplicaSetWithPrimary"
        [server] = client.topology_description.server_descriptions().values()
        assert server.server_type_name == "RSPrimary" and server.replica_set_name == "rs0"
        requests_before = client.admin.command("serverStatus")["network"]["numRequests"]
        already = sum(e.awaited for e in beats.succeeded_events)
        assert _wait(lambda: sum(e.awaited for e in beats.succeeded_events) - already >= 6, 15)
        requests_after = client.admin.command("serverStatus")["network"]["numRequests"]
        awaited = sum(e.awaited for e in beats.succeeded_events) - already
    assert beats.failed_events == []
    # streamed: the awaited heartbeats arrive on one open request, so the requests counted are
    # the RTT monitor's pings (one per heartbeat) and ours; a polling monitor would add as many again
    assert requests_after - requests_before < 1.5 * awaited + 2
    assert not [r for r in caplog.records if "failed" in r.getMessage().lower() and "heartbeat" in r.getMessage().lower()]


def test_a_step_down_reaches_the_monitor_at_once(member):
    host, port = member
    with pymongo.MongoClient(f"mongodb://{host}:{port}/?replicaSet=rs0",
                             heartbeatFrequencyMS=10_000) as client:
        client.admin.command("ping")
        time.sleep(0.3)  # the monitor is now waiting on its streaming hello
        started = time.monotonic()
        client.admin.command("replSetStepDown", 1, force=True)
        assert _wait(lambda: client.topology_description.topology_type_name == "ReplicaSetNoPrimary", 3)
        assert time.monotonic() - started < 3  # not the 10 s heartbeat
        assert _wait(lambda: client.topology_description.topology_type_name == "ReplicaSetWithPrimary", 5)


def test_the_member_gives_itself_its_bound_address(member):
    host, port = member
    with pymongo.MongoClient(host, port, directConnection=True) as c:
        hello = c.admin.command("hello")
        assert hello["me"] == hello["primary"] == f"127.0.0.1:{port}" and hello["hosts"] == [hello["me"]]
        assert c.admin.command("getCmdLineOpts")["parsed"]["replication"] == {"replSet": "rs0"}


def test_member_host_follows_mongods_rule():
    assert member_host(("127.0.0.1",), 27017) == "127.0.0.1:27017"
    assert member_host(("localhost", "127.0.0.1"), 1) == "localhost:1"
    assert member_host(("127.0.0.1", "10.1.2.3"), 5) == "10.1.2.3:5"
    assert member_host(("0.0.0.0",), 5) == f"{socket.gethostname()}:5"


def test_a_standalone_streams_hello_too():
    with running_server(None) as (host, port):
        beats = Heartbeats()
        with pymongo.MongoClient(host, port, heartbeatFrequencyMS=500, event_listeners=[beats]) as client:
            client.admin.command("ping")
            assert _wait(lambda: sum(e.awaited for e in beats.succeeded_events) >= 2, 10)
        assert beats.failed_events == []


def test_a_raw_awaitable_hello_streams_replies_with_more_to_come(member):
    host, port = member
    from unit.server.test_server_connections import raw_command

    from ginkgodb.wire.op_msg import EXHAUST_ALLOWED, MORE_TO_COME
    with socket.create_connection((host, port), timeout=5) as sock:
        tv = raw_command(sock, {"hello": 1, "$db": "admin"})["topologyVersion"]
        cmd = {"hello": 1, "topologyVersion": tv, "maxAwaitTimeMS": 100, "$db": "admin"}
        body = b"".join((EXHAUST_ALLOWED.to_bytes(4, "little"), b"\x00", bson.encode(cmd)))
        sock.sendall((16 + len(body)).to_bytes(4, "little") + (77).to_bytes(4, "little") + bytes(4)
                     + (2013).to_bytes(4, "little") + body)
        started = time.monotonic()
        previous = 77
        for _ in range(3):
            header = recv_exactly(sock, 16)
            length = int.from_bytes(header[:4], "little")
            request_id = int.from_bytes(header[4:8], "little")
            assert int.from_bytes(header[8:12], "little") == previous
            rest = recv_exactly(sock, length - 16)
            assert int.from_bytes(rest[:4], "little") & MORE_TO_COME
            assert bson.decode(rest[5:])["isWritablePrimary"] is True
            previous = request_id
        assert time.monotonic() - started >= 0.28  # each reply waited its maxAwaitTimeMS


# -- fail points that act on the connection ---------------------------------------------------------
@pytest.fixture
def test_commands():
    param = PARAMETERS.param("enableTestCommands")
    param.value = True
    yield
    param.value = False
    FAIL_POINTS.reset()


def test_close_connection_drops_the_connection_without_running_the_command(member, test_commands):
    host, port = member
    # no retries: the driver would otherwise retry the insert on a new connection, and it would land
    with pymongo.MongoClient(f"mongodb://{host}:{port}/?replicaSet=rs0&retryReads=false&retryWrites=false") as c:
        c.admin.command("configureFailPoint", "failCommand", mode={"times": 1},
                        data={"failCommands": ["insert"], "closeConnection": True})
        with pytest.raises(AutoReconnect):
            c.test.c.insert_one({"a": 1})
        assert c.test.c.count_documents({}) == 0
        c.test.c.insert_one({"a": 2})
        assert c.test.c.count_documents({}) == 1


def test_block_connection_on_an_inline_command_does_not_stall_others(member, test_commands):
    host, port = member
    with pymongo.MongoClient(host, port, directConnection=True, appname="blocked") as blocked, \
            pymongo.MongoClient(host, port, directConnection=True) as other:
        other.admin.command("ping")
        blocked.admin.command("configureFailPoint", "failCommand", mode={"times": 1},
                              data={"failCommands": ["ping"], "blockConnection": True, "blockTimeMS": 800,
                                    "appName": "blocked"})
        waiter = threading.Thread(target=blocked.admin.command, args=("ping",))
        started = time.monotonic()
        waiter.start()
        time.sleep(0.1)
        t0 = time.monotonic()
        other.admin.command("ping")
        assert time.monotonic() - t0 < 0.5
        waiter.join(5)
        assert time.monotonic() - started >= 0.75


# -- the command line and restarts ------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_configuration_survives_a_restart(tmp_path):
    path, port = str(tmp_path / "data"), _free_port()
    with running_server(path, subprocess=True, quiet=True, replSet="rs0", port=port) as (host, _):
        _initiate(host, port)
    with running_server(path, subprocess=True, quiet=True, replSet="rs0", port=port) as (host, _):
        with pymongo.MongoClient(f"mongodb://{host}:{port}/?replicaSet=rs0",
                                 serverSelectionTimeoutMS=10_000) as c:
            c.test.c.insert_one({})
            status = c.admin.command("replSetGetStatus")
            assert status["myState"] == 1 and status["term"] == 2
            assert c.admin.command("hello")["me"] == f"127.0.0.1:{port}"


def test_a_member_moved_to_another_port_is_removed_from_its_set(tmp_path):
    path = str(tmp_path / "data")
    with running_server(path, subprocess=True, quiet=True, replSet="rs0", port=_free_port()) as (host, port):
        _initiate(host, port)
    with running_server(path, subprocess=True, quiet=True, replSet="rs0", port=_free_port()) as (host, port):
        with pymongo.MongoClient(host, port, directConnection=True) as c:
            hello = c.admin.command("hello")
            assert hello["isWritablePrimary"] is False and hello["info"] == "Does not have a valid replica set config"
            log = c.admin.command("getLog", "global")["log"]
            assert any("does not have a valid entry for the current node" in line for line in log)


def test_an_unknown_set_parameter_stops_the_server(tmp_path):
    done = subprocess.run([sys.executable, "-m", "ginkgodb.cli", "serve", "--in-memory", "--port", "0",
                           "--setParameter", "noSuchParameter=1"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert 'Illegal --setParameter parameter: "noSuchParameter"' in done.stderr


def test_set_parameter_enables_test_commands(tmp_path):
    with running_server(None, subprocess=True, quiet=True, setParameter="enableTestCommands=1") as (host, port):
        with pymongo.MongoClient(host, port) as c:
            assert c.admin.command("getParameter", 1, enableTestCommands=1)["enableTestCommands"] is True
            assert c.admin.command("configureFailPoint", "failCommand", mode="off")["count"] == 0
            assert c.admin.command("getCmdLineOpts")["parsed"]["setParameter"] == {"enableTestCommands": "1"}
