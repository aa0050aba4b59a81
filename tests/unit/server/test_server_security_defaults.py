"""Safe defaults: mongod's --bind_ip/--bind_ip_all spellings, the startup warnings without
--auth, and authentication events in the log (failures with the client's address, rate-limited)."""
from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
from pathlib import Path

import pymongo
import pytest
from pymongo.errors import OperationFailure

from ginkgodb.cli import _parser
from ginkgodb.server.auth_log import AuthLog
from ginkgodb.server.testing import running_server

ROOT = Path(__file__).resolve().parents[3]


def test_bind_ip_spellings():
    parse = _parser().parse_args
    assert parse(["serve"]).bind == "127.0.0.1"
    assert parse(["serve", "--bind_ip", "127.0.0.1,::1"]).bind == "127.0.0.1,::1"
    assert parse(["serve", "--bind", "10.0.0.1"]).bind == "10.0.0.1"
    assert parse(["serve", "--bind_ip_all"]).bind_ip_all
    with pytest.raises(SystemExit):
        parse(["serve", "--bind_ip", "127.0.0.1", "--bind_ip_all"])


def _warnings(client) -> list[dict]:
    return [json.loads(line) for line in client.admin.command("getLog", "startupWarnings")["log"]]


def test_startup_warning_without_auth_on_loopback():
    with running_server(quiet=True) as address:
        ids = [w["id"] for w in _warnings(pymongo.MongoClient(*address))]
        assert ids == [22120]


def test_no_warning_with_auth():
    with running_server(auth=True, quiet=True) as address:
        pymongo.MongoClient(*address).admin.command("createUser", "u", pwd="p", roles=["root"])
        assert _warnings(pymongo.MongoClient(*address, username="u", password="p")) == []


def test_warning_when_reachable_from_other_hosts_without_auth():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "ginkgodb.cli", "serve", "--in-memory", "--port", "0",
                             "--bind_ip_all"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    lines = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(json.loads(line))
            if lines[-1]["msg"] == "Waiting for connections":
                break
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    exposed = [entry for entry in lines if entry["id"] == 22121]
    assert exposed and exposed[0]["s"] == "W" and exposed[0]["attr"]["addresses"] == ["0.0.0.0"]
    assert any(entry["id"] == 23015 and entry["attr"]["address"] == "0.0.0.0" for entry in lines)


def test_failed_authentication_is_logged_with_the_remote_address(caplog):
    caplog.set_level(logging.INFO, logger="ginkgodb")
    with running_server(auth=True, quiet=True) as address:
        pymongo.MongoClient(*address).admin.command("createUser", "u", pwd="p", roles=["root"])
        bad = pymongo.MongoClient(*address, username="u", password="wrong", authMechanism="SCRAM-SHA-256",
                                  serverSelectionTimeoutMS=3000)
        with pytest.raises(OperationFailure):
            bad.admin.command("ping")
        pymongo.MongoClient(*address, username="u", password="p").admin.command("ping")
    failed = [r.mongo for r in caplog.records if getattr(r, "mongo", (0, 0))[1] == 5286307]
    assert failed, "no failed-authentication line"
    attr = failed[0][3]
    assert attr["principalName"] == "u" and attr["authenticationDatabase"] == "admin"
    assert attr["mechanism"] == "SCRAM-SHA-256" and attr["remote"].startswith("127.0.0.1:")
    assert "error" in attr
    assert any(getattr(r, "mongo", (0, 0))[1] == 5286306 for r in caplog.records)


def test_failure_lines_are_rate_limited(caplog):
    caplog.set_level(logging.INFO, logger="ginkgodb")
    log = AuthLog(burst=5)
    for _ in range(50):
        log(False, {"mechanism": "SCRAM-SHA-1", "principalName": "x", "remote": "10.0.0.9:5000"})
    lines = [r for r in caplog.records if getattr(r, "mongo", (0, 0))[1] == 5286307]
    assert 5 <= len(lines) <= 10  # a second may turn over during the loop


def test_names_never_reach_outside_the_data_directory(tmp_path):
    """Names are keys inside the storage, never file names: odd ones are stored, bad ones are
    refused with 73, and nothing appears outside the data directory."""
    from ginkgodb.commands import CommandContext, dispatch
    from ginkgodb.engine import Engine
    data = tmp_path / "data"
    engine = Engine.open(str(data))
    ctx = CommandContext(engine=engine)
    try:
        for coll in ("a/b", "/abs/slashes", "x" * 200, "dir/./file"):
            assert dispatch(ctx, {"insert": coll, "documents": [{"_id": 1}], "$db": "t"})["n"] == 1
            assert [dict(d) for d in dispatch(ctx, {"find": coll, "$db": "t"})["cursor"]["firstBatch"]] == [{"_id": 1}]
        for db, coll in (("../up", "c"), ("a/b", "c"), ("nul\x00db", "c"), ("y" * 100, "c"), (".", "c"),
                         ("a\\b", "c"), ("t", "nul\x00coll"), ("t", "../../escape")):
            reply = dispatch(ctx, {"insert": coll, "documents": [{}], "$db": db})
            assert reply["ok"] == 0 and reply["code"] == 73, (db, coll, reply)
    finally:
        engine.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data"]
    for path in data.rglob("*"):
        assert path.resolve().is_relative_to(data.resolve())
        assert "escape" not in path.name and "slashes" not in path.name and "up" not in path.name
