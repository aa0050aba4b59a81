"""Slow commands run off the event loop: pings on other connections stay fast; killOp and
maxTimeMS stop a running command."""
from __future__ import annotations

import statistics
import threading
import time

import pymongo
import pytest
from pymongo.errors import ExecutionTimeout, OperationFailure

from ginkgodb.commands.declare import COMMANDS, command, integer
from ginkgodb.server.testing import running_server

BURN = "burnCpuForTest"


@pytest.fixture(scope="module", autouse=True)
def burn_command():
    """A CPU-bound command (pure Python, holds the GIL) that checks for interruption."""
    @command(BURN, help="test only: burn CPU for `millis`", fields=(integer("millis", 1000),))
    def burn(ctx, args):
        until = time.monotonic() + args.millis / 1000
        n = 0
        while time.monotonic() < until:
            for i in range(2000):
                n += i * i
            ctx.check_interrupt()
        return {"n": n}
    yield
    COMMANDS.pop(BURN, None)


@pytest.fixture(scope="module")
def server():
    with running_server() as address:
        yield address


def connect(server):
    return pymongo.MongoClient(*server, serverSelectionTimeoutMS=5000)


def test_pings_stay_fast_while_a_slow_command_runs(server):
    slow, fast = connect(server), connect(server)
    try:
        fast.admin.command("ping")
        worker = threading.Thread(target=slow.admin.command, args=(BURN,), kwargs={"millis": 1500})
        worker.start()
        time.sleep(0.2)
        latencies = []
        while worker.is_alive() and len(latencies) < 200:
            start = time.perf_counter()
            fast.admin.command("ping")
            latencies.append(time.perf_counter() - start)
            time.sleep(0.005)
        worker.join()
        assert len(latencies) >= 20
        worst = max(latencies) * 1000
        median = statistics.median(latencies) * 1000
        print(f"ping latency during a slow command: median {median:.2f} ms, max {worst:.2f} ms")
        assert median < 20 and worst < 100
    finally:
        slow.close()
        fast.close()


def test_kill_op_interrupts_a_running_command(server):
    slow, admin = connect(server), connect(server)
    errors = []

    def run_slow():
        try:
            slow.admin.command(BURN, millis=20_000)
        except OperationFailure as exc:
            errors.append(exc)
    try:
        worker = threading.Thread(target=run_slow)
        worker.start()
        opid = _wait_for_op(admin, BURN)
        assert admin.admin.command("killOp", op=opid)["info"] == "attempting to kill op"
        worker.join(10)
        assert not worker.is_alive()
        assert errors and errors[0].code == 11601
    finally:
        slow.close()
        admin.close()


def _wait_for_op(client, name: str) -> int:
    for _ in range(200):
        for op in client.admin.command("currentOp")["inprog"]:
            if name in op["command"]:
                assert op["op"] == "command" and op["active"]
                return op["opid"]
        time.sleep(0.01)
    raise AssertionError(f"{name} never showed up in currentOp")


def test_max_time_ms_sets_a_deadline(server):
    client = connect(server)
    try:
        start = time.monotonic()
        with pytest.raises(ExecutionTimeout) as info:
            client.admin.command(BURN, millis=10_000, maxTimeMS=200)
        assert info.value.code == 50
        assert time.monotonic() - start < 3
    finally:
        client.close()


def test_current_op_shows_itself(server):
    client = connect(server)
    try:
        ops = client.admin.command("currentOp")["inprog"]
        assert any("currentOp" in op["command"] for op in ops)
    finally:
        client.close()


def test_stop_lets_an_in_flight_command_finish():
    import asyncio

    from ginkgodb.engine import Engine
    from ginkgodb.server.config import ServerConfig
    from ginkgodb.server.lifecycle import Server

    engine = Engine.open(None)
    server = Server(ServerConfig(port=0, dbpath=None), engine)
    loop = asyncio.new_event_loop()
    ready = threading.Event()

    def serve():
        loop.run_until_complete(server.start())
        ready.set()
        loop.run_until_complete(server.serve_until_stopped())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    assert ready.wait(10)
    client = pymongo.MongoClient("127.0.0.1", server.port, serverSelectionTimeoutMS=5000)
    replies = []
    worker = threading.Thread(target=lambda: replies.append(client.admin.command(BURN, millis=700)))
    worker.start()
    time.sleep(0.3)
    server.request_stop()
    worker.join(10)
    thread.join(10)
    client.close()
    loop.close()
    engine.close()
    assert replies and replies[0]["ok"] == 1.0  # answered, not cut off
    assert not thread.is_alive()
