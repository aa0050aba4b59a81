"""fsync, fsyncUnlock and shutdown through dispatch (both engines), as mongod answers them."""
from __future__ import annotations

import threading
import time

from bson.int64 import Int64
from support.runner import Runner, run_without_engine
from unit.commands.fake_server import FakeServer

from ginkgodb.commands import CommandContext, dispatch


def test_fsync_flushes(admin):
    assert admin({"fsync": 1}) == {"numFiles": 1, "ok": 1.0}


def test_fsync_and_unlock_run_against_admin_only(run):
    for cmd in ({"fsync": 1}, {"fsyncUnlock": 1}, {"shutdown": 1}):
        reply = run.error(cmd)
        assert (reply["code"], reply["codeName"]) == (13, "Unauthorized")


def test_fsync_lock_counts_like_mongod(admin):
    first = admin({"fsync": 1, "lock": True})
    assert first == {"info": "now locked against writes, use db.fsyncUnlock() to unlock",
                     "lockCount": Int64(1), "seeAlso": "http://dochub.mongodb.org/core/fsynccommand", "ok": 1.0}
    assert admin({"fsync": 1, "lock": True})["lockCount"] == 2
    assert admin({"currentOp": 1})["fsyncLock"] is True
    assert admin({"fsyncUnlock": 1}) == {"info": "fsyncUnlock completed", "lockCount": Int64(1), "ok": 1.0}
    assert admin({"fsyncUnlock": 1})["lockCount"] == 0
    assert "fsyncLock" not in admin({"currentOp": 1})
    # mongod's legacy errmsg-only failure: no code, no codeName
    assert admin.raw({"fsyncUnlock": 1}) == {"ok": 0.0, "errmsg": "fsyncUnlock called when not locked"}
    assert admin.error({"fsyncLock": 1})["code"] == 59  # a shell helper, not a command


def test_writes_wait_while_locked_and_reads_go_on(engine):
    admin, run = Runner(engine, db="admin"), Runner(engine)
    run.insert("c", {"_id": 1})
    admin({"fsync": 1, "lock": True})
    results: list = []
    other = Runner(engine)  # another client: its own context
    writer = threading.Thread(target=lambda: results.append(other.raw({"insert": "c", "documents": [{"_id": 2}]})))
    writer.start()
    time.sleep(0.2)
    assert writer.is_alive() and not results  # held back
    assert [d["_id"] for d in run.find("c")] == [1]  # reads go on
    timed_out = run.raw({"insert": "c", "documents": [{"_id": 3}], "maxTimeMS": 100})
    assert (timed_out["code"], timed_out["codeName"]) == (50, "MaxTimeMSExpired")
    out = run.raw({"aggregate": "c", "pipeline": [{"$out": "copy"}], "cursor": {}, "maxTimeMS": 100})
    assert out["code"] == 50  # an aggregation that writes waits too
    admin({"fsyncUnlock": 1})
    writer.join(5)
    assert results and results[0]["n"] == 1
    assert [d["_id"] for d in run.find("c")] == [1, 2]


def test_a_held_write_is_killable(engine):
    admin = Runner(engine, db="admin")
    admin({"fsync": 1, "lock": True})
    ctx = CommandContext(engine=engine)
    replies: list = []
    writer = threading.Thread(target=lambda: replies.append(
        dispatch(ctx, {"insert": "c", "documents": [{"x": 1}], "$db": "test"})))
    writer.start()
    time.sleep(0.1)
    ctx.killed = True
    writer.join(5)
    assert replies[0]["code"] == 11601
    admin({"fsyncUnlock": 1})
    assert Runner(engine).find("c") == []


def test_shutdown_from_elsewhere_than_localhost_is_unauthorized():
    server = FakeServer()
    reply = run_without_engine({"shutdown": 1}, server=server, client_address="10.1.2.3:50000")
    assert reply == {"ok": 0.0, "errmsg": "shutdown must run from localhost when running db without auth",
                     "code": 13, "codeName": "Unauthorized"}
    assert not getattr(server, "shutdown_requests", [])


def test_shutdown_from_localhost_asks_the_server_to_stop():
    server = FakeServer()
    reply = run_without_engine({"shutdown": 1, "force": True, "timeoutSecs": 3}, server=server,
                               client_address="127.0.0.1:50000")
    assert reply["ok"] == 1.0 and server.shutdown_requests == [3.0]
    bad = run_without_engine({"shutdown": 1, "timeoutSecs": "x"}, server=server, client_address="127.0.0.1:1")
    assert bad["code"] == 14
    assert run_without_engine({"shutdown": 1, "grace": 1}, server=server,
                              client_address="127.0.0.1:1")["code"] == 40415


def test_the_embedded_client_refuses_shutdown(admin):
    reply = admin.error({"shutdown": 1})
    assert (reply["code"], reply["codeName"]) == (20, "IllegalOperation")
    assert "close the MongoClient" in reply["errmsg"]
