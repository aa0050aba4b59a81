"""serverStatus with a server's counters and without one, and its optional sections."""
from __future__ import annotations

from support.runner import run_without_engine as run
from unit.commands.fake_server import FakeServer

from ginkgodb import MONGODB_VERSION


def test_server_status_with_a_server():
    reply = run({"serverStatus": 1}, server=FakeServer())
    assert reply["host"] == "testhost:27017" and reply["version"] == MONGODB_VERSION
    assert reply["uptime"] >= 4 and reply["uptimeMillis"] >= 4000
    assert reply["connections"]["current"] == 3
    assert set(reply["opcounters"]) == {"insert", "query", "update", "delete", "getmore", "command"}
    assert reply["opcounters"]["insert"] == 4
    assert reply["mem"]["resident"] > 0 and reply["mem"]["virtual"] >= reply["mem"]["resident"]
    for key in ("process", "pid", "localTime", "network"):
        assert key in reply


def test_server_status_sections_can_be_left_out():
    reply = run({"serverStatus": 1, "opcounters": 0, "mem": False})
    assert "opcounters" not in reply and "mem" not in reply and "connections" in reply
