"""Logical sessions on a standalone: startSession, and the commands that only validate."""
from __future__ import annotations

import pytest
from bson.binary import Binary
from support.runner import run_without_engine as run


def test_sessions_commands():
    session = run({"startSession": 1})
    assert isinstance(session["id"]["id"], Binary) and session["id"]["id"].subtype == 4
    assert session["timeoutMinutes"] == 30
    assert run({"endSessions": [session["id"]]}) == {"ok": 1.0}
    assert run({"refreshSessions": [session["id"]]})["ok"] == 1.0
    assert run({"killSessions": []})["ok"] == 1.0
    assert run({"endSessions": 1})["code"] == 14


@pytest.mark.parametrize("name", ["endSessions", "refreshSessions", "killSessions", "killAllSessions",
                                  "killAllSessionsByPattern"])
def test_session_lists_must_be_arrays_of_documents(name):
    assert run({name: []}) == {"ok": 1.0}
    err = run({name: 1})
    assert (err["code"], err["errmsg"]) == (14, f"BSON field '{name}.{name}' is the wrong type 'int', "
                                                "expected type 'array'")
    assert run({name: [1]})["code"] == 14


def test_start_session_gives_a_new_id_each_time():
    assert run({"startSession": 1})["id"] != run({"startSession": 1})["id"]

