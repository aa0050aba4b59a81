"""`ginkgodb` as a process: --version/--help, a clean stop on SIGTERM, clear failures."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pymongo

from ginkgodb import MONGODB_VERSION, __version__
from ginkgodb.server.testing import running_server

ROOT = Path(__file__).resolve().parents[3]


def cli(*args: str, timeout: float = 30) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "ginkgodb.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


def start(*args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "ginkgodb.cli", "serve", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def wait_listening(proc: subprocess.Popen) -> int:
    for line in proc.stdout:
        entry = json.loads(line)
        if entry["msg"] == "Waiting for connections":
            return entry["attr"]["port"]
    raise AssertionError(proc.stderr.read())


def test_version():
    out = cli("--version")
    assert out.returncode == 0
    assert out.stdout.strip() == f"ginkgodb {__version__} (MongoDB {MONGODB_VERSION} wire protocol)"


def test_serve_help_explains_every_option():
    out = cli("serve", "--help")
    assert out.returncode == 0
    for option in ("--port", "--bind", "--dbpath", "--in-memory", "--log-level", "--slowms", "--quiet"):
        assert option in out.stdout
    assert "127.0.0.1" in out.stdout and "./ginkgo-data" in out.stdout


def test_sigterm_stops_cleanly_with_json_logs(tmp_path):
    proc = start("--port", "0", "--dbpath", str(tmp_path / "data"))
    try:
        port = wait_listening(proc)
        client = pymongo.MongoClient("127.0.0.1", port, serverSelectionTimeoutMS=5000, appname="probe")
        assert client.admin.command("ping")["ok"] == 1.0
        client.close()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    messages = [entry["msg"] for entry in lines]
    assert {"Connection accepted", "Connection ended", "client metadata", "Received signal",
            "Now exiting"} <= set(messages)
    for entry in lines:
        assert set(entry) >= {"t", "s", "c", "id", "ctx", "msg"}
    metadata = next(e for e in lines if e["msg"] == "client metadata")
    assert metadata["attr"]["doc"]["application"]["name"] == "probe"


def test_quiet_leaves_out_connection_lines(tmp_path):
    proc = start("--port", "0", "--in-memory", "--quiet")
    try:
        port = wait_listening(proc)
        pymongo.MongoClient("127.0.0.1", port, serverSelectionTimeoutMS=5000).admin.command("ping")
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0
    assert "Connection accepted" not in out


def test_operations_over_slowms_are_logged():
    proc = start("--port", "0", "--in-memory", "--slowms", "0")
    try:
        port = wait_listening(proc)
        client = pymongo.MongoClient("127.0.0.1", port, serverSelectionTimeoutMS=5000)
        client.slowdb.c.insert_one({"a": 1})
        client.close()
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    finally:
        proc.kill()
    slow = [json.loads(line) for line in out.splitlines() if '"Slow query"' in line]
    insert = next(e for e in slow if e["attr"]["ns"] == "slowdb.c")
    assert insert["id"] == 51803 and insert["c"] == "COMMAND"
    assert insert["attr"]["type"] == "command" and "insert" in insert["attr"]["command"]
    assert insert["attr"]["durationMillis"] >= 0


def test_second_server_on_the_same_data_directory_fails_clearly(tmp_path):
    with running_server(str(tmp_path / "data"), subprocess=True):
        out = cli("serve", "--port", "0", "--dbpath", str(tmp_path / "data"))
    assert out.returncode == 100
    assert "DBPathInUse" in out.stderr and "already" in out.stderr


def test_port_in_use_fails_with_exit_48(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        out = cli("serve", "--port", str(taken.getsockname()[1]), "--in-memory")
    assert out.returncode == 48
    assert "Failed to listen" in out.stderr


def test_running_server_in_a_subprocess_serves_pymongo(tmp_path):
    with running_server(str(tmp_path / "d"), subprocess=True, quiet=True) as (host, port):
        client = pymongo.MongoClient(host, port, serverSelectionTimeoutMS=5000)
        assert client.admin.command("getCmdLineOpts")["parsed"]["storage"]["dbPath"] == str(tmp_path / "d")
        client.close()
