"""Logical sessions: the session catalog behind startSession, endSessions, refreshSessions,
killSessions and $listLocalSessions; ending a session aborts its transaction."""
from __future__ import annotations

import bson
import pytest
from bson.binary import Binary
from bson.int64 import Int64

from ginkgodb.commands import CommandContext, dispatch


@pytest.fixture
def run(engine):
    def run(cmd):
        reply = dispatch(CommandContext(engine=engine), {**cmd, "$db": cmd.get("$db", "admin")})
        return bson.decode(bson.encode(reply))
    return run


def _listed(run):
    reply = run({"aggregate": 1, "pipeline": [{"$listLocalSessions": {}}], "cursor": {}})
    return [d["_id"]["id"] for d in reply["cursor"]["firstBatch"]]


def test_sessions_are_cached_until_ended(run):
    session = run({"startSession": 1})
    sid = session["id"]
    assert isinstance(sid["id"], Binary) and sid["id"].subtype == 4 and session["timeoutMinutes"] == 30
    assert sid["id"] in _listed(run)
    assert run({"refreshSessions": [sid]})["ok"] == 1.0
    assert run({"endSessions": [sid]}) == {"ok": 1.0}
    assert sid["id"] not in _listed(run)
    run({"find": "c", "lsid": sid, "$db": "db"})  # any command with an lsid keeps its session
    assert sid["id"] in _listed(run)
    assert run({"killAllSessions": []})["ok"] == 1.0
    assert _listed(run) == []


def test_ending_a_session_aborts_its_transaction(run):
    sid = run({"startSession": 1})["id"]
    fields = {"lsid": sid, "txnNumber": Int64(1), "autocommit": False, "$db": "db"}
    assert run({"insert": "c", "documents": [{"_id": 1}], "startTransaction": True, **fields})["ok"] == 1.0
    assert run({"killSessions": [sid]})["ok"] == 1.0
    assert run({"commitTransaction": 1, **fields, "$db": "admin"})["code"] == 251
    assert run({"count": "c", "$db": "db"})["n"] == 0


@pytest.mark.parametrize("name", ["endSessions", "refreshSessions", "killSessions", "killAllSessions",
                                  "killAllSessionsByPattern"])
def test_session_lists_must_be_arrays_of_documents(run, name):
    assert run({name: []}) == {"ok": 1.0}
    err = run({name: 1})
    assert (err["code"], err["errmsg"]) == (14, f"BSON field '{name}.{name}' is the wrong type 'int', "
                                                "expected type 'array'")
    assert run({name: [1]})["code"] == 14


def test_start_session_gives_a_new_id_each_time(run):
    assert run({"startSession": 1})["id"] != run({"startSession": 1})["id"]
