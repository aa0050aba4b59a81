"""A member's committed transaction outlives its restart (mongod's config.transactions is
durable): `ginkgodb serve --replSet rs0` (a set of one), a transaction committed, the server
killed with SIGKILL and started again on its port: the same commitTransaction, retried, answers
ok and the transaction is not run twice; abortTransaction answers 256 TransactionCommitted."""
from __future__ import annotations

import os
import signal
import sys
import time
import uuid

import pymongo
import pytest
from bson.binary import Binary
from bson.int64 import Int64
from e2e.test_replica_set_sync import command
from support.sockets import free_port_range

from ginkgodb import cluster

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]


def _serve(port: int, dbpath, log) -> int:
    argv = [sys.executable, "-m", "ginkgodb", "serve", "--port", str(port), "--bind", "127.0.0.1",
            "--dbpath", str(dbpath), "--replSet", "rs0"]
    pid = cluster._spawn(argv, log)
    assert cluster._wait_port(port, 30), log.read_text()[-2000:]
    return pid


def _primary(port: int) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        hello = cluster._hello(port, 500)
        if hello and hello.get("isWritablePrimary"):
            return
        time.sleep(0.05)
    raise AssertionError("not primary")


def test_a_commit_retried_after_the_members_restart_answers_ok(tmp_path):
    port = free_port_range(1)
    log = tmp_path / "member.log"
    pid = _serve(port, tmp_path / "data", log)
    try:
        with pymongo.MongoClient(f"127.0.0.1:{port}", directConnection=True) as client:
            client.admin.command("replSetInitiate")
        _primary(port)
        lsid = {"id": Binary(uuid.uuid4().bytes, 4)}
        txn = {"lsid": lsid, "txnNumber": Int64(3), "autocommit": False}
        assert command(port, {"insert": "c", "documents": [{"_id": 1}], "startTransaction": True, **txn,
                              "$db": "t"})["ok"] == 1.0
        commit = {"commitTransaction": 1, **txn, "writeConcern": {"w": "majority"}, "$db": "admin"}
        assert command(port, commit)["ok"] == 1.0
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        pid = _serve(port, tmp_path / "data", log)
        _primary(port)
        again = command(port, commit)
        assert again["ok"] == 1.0, again
        aborted = command(port, {"abortTransaction": 1, **txn, "$db": "admin"})
        assert (aborted["code"], aborted["codeName"]) == (256, "TransactionCommitted")
        with pymongo.MongoClient(f"127.0.0.1:{port}", directConnection=True) as client:
            assert list(client.t.c.find()) == [{"_id": 1}]
    finally:
        _stop(pid)


def _stop(pid: int) -> None:
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if os.waitpid(pid, os.WNOHANG) != (0, 0):
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
