"""Logical sessions on a standalone: startSession, and the commands that only validate."""
from __future__ import annotations

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
