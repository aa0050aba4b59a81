"""ping, buildInfo, hostInfo, whatsmyuri, connectionStatus, getCmdLineOpts, listCommands,
getLog, replSetGetStatus: with a server and without one (the embedded client)."""
from __future__ import annotations

import pytest
from support.runner import run_without_engine as run
from unit.commands.fake_server import FakeServer

from ginkgodb import MONGODB_VERSION


def test_ping_is_ok():
    assert run({"ping": 1}) == {"ok": 1.0}


@pytest.mark.parametrize("name", ["buildInfo", "buildinfo"])
def test_build_info_has_mongods_fields(name):
    reply = run({name: 1, "$db": "test"})
    assert reply["version"] == MONGODB_VERSION
    assert reply["versionArray"] == [int(p) for p in MONGODB_VERSION.split(".")] + [0]
    assert reply["modules"] == [] and reply["bits"] == 64 and reply["debug"] is False
    assert reply["maxBsonObjectSize"] == 16 * 1024 * 1024
    for key in ("gitVersion", "allocator", "javascriptEngine", "sysInfo", "openssl", "storageEngines"):
        assert key in reply
    assert {"target_os", "target_arch"} <= set(reply["buildEnvironment"])


def test_get_log_startup_warnings_is_empty():
    assert run({"getLog": "startupWarnings"}) == {"totalLinesWritten": 0, "log": [], "ok": 1.0}


def test_get_log_names_global_and_unknown():
    assert run({"getLog": "*"})["names"] == ["global", "startupWarnings"]
    assert run({"getLog": "global"}, server=FakeServer())["totalLinesWritten"] == 1
    assert run({"getLog": "nope"})["code"] == 96


def test_host_info_has_system_and_os():
    reply = run({"hostInfo": 1})
    assert reply["system"]["numCores"] >= 1 and reply["system"]["memSizeMB"] > 0
    assert reply["os"]["type"]


def test_whatsmyuri_and_connection_status():
    assert run({"whatsmyuri": 1}, client_address="127.0.0.1:5555")["you"] == "127.0.0.1:5555"
    assert run({"connectionStatus": 1})["authInfo"] == {"authenticatedUsers": [], "authenticatedUserRoles": []}


def test_get_cmd_line_opts():
    assert run({"getCmdLineOpts": 1}, server=FakeServer())["parsed"] == {"net": {"port": 27017}}
    assert "argv" in run({"getCmdLineOpts": 1})


def test_list_commands_comes_from_the_registry():
    commands = run({"listCommands": 1})["commands"]
    assert commands["ping"]["help"].startswith("a way to check")
    assert commands["getParameter"]["adminOnly"] is True
    assert list(commands) == sorted(commands)


def test_repl_set_get_status_on_a_standalone_is_76():
    reply = run({"replSetGetStatus": 1})
    assert (reply["code"], reply["codeName"], reply["errmsg"]) == (76, "NoReplicationEnabled",
                                                                   "not running with --replSet")
