"""A full disk (issue 8, point 4): writes get 14031 OutOfDiskSpace, logged once per episode;
reads keep working; deletes and drops still commit and free space; writes come back without a
restart when space returns. On a real (small) tmpfs."""
from __future__ import annotations

import logging
import os
import time

import pymongo
import pytest
from pymongo.errors import OperationFailure
from support.runner import Runner

from ginkgodb.engine import Engine
from ginkgodb.server.testing import running_server

MIB = 1024 * 1024
RESERVE = 4 * MIB
#: a small oplog (`--oplogSize`): the default cap would hold more copies than the disk has room for
OPLOG = 1 * MIB


def _fill(run: Runner, start: int = 0) -> tuple[int, dict]:
    """Insert 100 documents of 1 KB at a time until a write fails; (documents stored, the reply)."""
    n = start
    while True:
        reply = run.raw({"insert": "c", "documents": [{"n": n + i, "pad": "a" * 1000} for i in range(100)]})
        if reply["ok"] != 1.0:
            return n, reply
        n += 100


def _episodes(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "ginkgodb.storage" and r.levelno == logging.WARNING]


def test_a_full_disk_refuses_writes_cleanly_and_deletes_and_drops_free_it(small_tmpfs, caplog):
    caplog.set_level(logging.INFO, logger="ginkgodb")
    engine = Engine.open(str(small_tmpfs(24) / "data"), reserve_bytes=RESERVE, oplog_bytes=OPLOG)
    try:
        run = Runner(engine)
        stored, reply = _fill(run)
        assert stored > 5000
        assert (reply["code"], reply["codeName"]) == (14031, "OutOfDiskSpace")
        assert reply["errmsg"].startswith("No space left on device")
        for _ in range(20):  # every later write: the same answer, never EIO or InternalError
            again = run.raw({"insert": "c", "documents": [{"x": 1}]})
            assert again["code"] == 14031
            again = run.raw({"update": "c", "updates": [{"q": {"n": 1}, "u": {"$set": {"big": "b" * 5000}}}]})
            assert again["code"] == 14031
        assert len(_episodes(caplog)) == 1  # logged once, not per write
        assert not [r for r in caplog.records if r.exc_info]  # and no traceback anywhere

        assert run({"count": "c"})["n"] == stored  # reads keep working
        assert len(run.find("c", {"n": {"$lt": 10}})) == 10
        assert run({"delete": "c", "deletes": [{"q": {"n": {"$lt": stored // 2}}, "limit": 0}]})["n"] == stored // 2
        refill, reply = _fill(run, stored)  # the deleted documents' room is used again...
        assert refill - stored > stored // 4 and reply["code"] == 14031  # ...until it is full again
        assert run({"drop": "c"})["nIndexesWas"] == 1  # a drop commits on the reserve
        assert run.insert("c", {"after": "drop"})["n"] == 1
        assert len(_episodes(caplog)) == 1
    finally:
        engine.close()


def test_one_write_larger_than_what_is_left_is_rolled_back_with_14031(small_tmpfs):
    engine = Engine.open(str(small_tmpfs(24) / "data"), reserve_bytes=RESERVE, oplog_bytes=OPLOG)
    try:
        run = Runner(engine)
        stored, _ = _fill(run)
        run({"delete": "c", "deletes": [{"q": {"n": {"$lt": stored // 2}}, "limit": 0}]})
        big = run.raw({"insert": "c", "documents": [{"k": i, "pad": "z" * 1000} for i in range(20000)]})
        assert (big["ok"], big["code"]) == (0.0, 14031)  # its commit hit the full disk
        assert run({"count": "c", "query": {"k": {"$exists": True}}})["n"] == 0  # nothing of it stayed
        assert run({"count": "c"})["n"] == stored - stored // 2
        assert run.insert("c", {"small": 1})["n"] == 1  # and smaller writes still fit
    finally:
        engine.close()


def test_writes_come_back_without_a_restart_when_space_returns(small_tmpfs, caplog):
    caplog.set_level(logging.INFO, logger="ginkgodb")
    mount = small_tmpfs(24)
    ballast = mount / "ballast"
    ballast.write_bytes(b"\0" * (8 * MIB))  # someone else's file filling the disk
    engine = Engine.open(str(mount / "data"), reserve_bytes=RESERVE, oplog_bytes=OPLOG)
    try:
        run = Runner(engine)
        stored, reply = _fill(run)
        assert reply["code"] == 14031
        os.unlink(ballast)
        start = time.monotonic()
        while run.raw({"insert": "c", "documents": [{"back": 1}]})["ok"] != 1.0:
            assert time.monotonic() - start < 5, "writes did not come back"
            time.sleep(0.01)
        recovery = time.monotonic() - start
        print(f"disk-full recovery after space returned: {recovery * 1000:.0f} ms")
        assert not engine.kv.disk_full
        more, _ = _fill(run, stored)
        assert more - stored > 3000  # the freed 8 MiB is used
        recovered = [r for r in caplog.records if r.name == "ginkgodb.storage" and r.levelno == logging.INFO]
        assert len(recovered) == 1 and len(_episodes(caplog)) == 2  # the second fill is a new episode
    finally:
        engine.close()
    reopened = Engine.open(str(mount / "data"), reserve_bytes=RESERVE, oplog_bytes=OPLOG)  # a full disk still opens
    try:
        assert Runner(reopened)({"count": "c"})["n"] == more + 1
    finally:
        reopened.close()


def test_over_the_wire_clients_get_14031_and_the_server_keeps_serving(small_tmpfs, caplog):
    caplog.set_level(logging.INFO, logger="ginkgodb")
    path = str(small_tmpfs(24) / "data")
    with running_server(path, disk_reserve_mb=4, quiet=True) as address:
        client = pymongo.MongoClient(*address, serverSelectionTimeoutMS=5000)
        try:
            coll = client.t.c
            with pytest.raises(OperationFailure) as err:
                for i in range(1000):
                    coll.insert_many([{"i": i, "j": j, "pad": "p" * 1000} for j in range(100)])
            assert err.value.code == 14031 and err.value.details["codeName"] == "OutOfDiskSpace"
            stored = coll.count_documents({})
            for _ in range(10):
                with pytest.raises(OperationFailure) as again:
                    coll.insert_one({"x": 1})
                assert again.value.code == 14031
            assert client.admin.command("ping")["ok"] == 1.0
            assert coll.delete_many({"j": {"$lt": 50}}).deleted_count == stored // 2
            coll.insert_one({"x": 2})
        finally:
            client.close()
    assert len(_episodes(caplog)) == 1
    assert not [r for r in caplog.records if r.exc_info]
