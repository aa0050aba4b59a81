"""ping, buildInfo, hostInfo, getParameter, getLog, serverStatus, currentOp/killOp, sessions:
with a server and without one (the embedded client)."""
from __future__ import annotations

import pytest
from bson.binary import Binary

from ginkgodb import MONGODB_VERSION
from ginkgodb.commands import CommandContext, dispatch
from ginkgodb.commands.server_view import OpInfo
from ginkgodb.commands.parameters import PARAMETERS
from unit.server.fake_server import FakeServer


def run(cmd, server=None, **kw):
    return dispatch(CommandContext(engine=None, server=server, **kw), {**cmd, "$db": cmd.get("$db", "admin")})


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


def test_atlas_version_is_not_a_command():
    reply = run({"atlasVersion": 1})
    assert (reply["code"], reply["errmsg"]) == (59, "no such command: 'atlasVersion'")


def test_get_parameter_feature_compatibility_version():
    assert run({"getParameter": 1, "featureCompatibilityVersion": 1}) == {
        "featureCompatibilityVersion": {"version": "7.0"}, "ok": 1.0}


def test_get_parameter_star_lists_everything():
    reply = run({"getParameter": "*"})
    assert {"featureCompatibilityVersion", "logLevel", "quiet"} <= set(reply)


def test_get_parameter_show_details():
    reply = run({"getParameter": {"showDetails": True}, "logLevel": 1})
    assert reply["logLevel"] == {"value": PARAMETERS.value("logLevel"), "settableAtRuntime": True,
                                 "settableAtStartup": True}


def test_get_parameter_unknown_is_72():
    reply = run({"getParameter": "foo"})
    assert (reply["code"], reply["codeName"], reply["errmsg"]) == (72, "InvalidOptions", "no option found to get")


def test_get_parameter_outside_admin_is_unauthorized():
    reply = run({"getParameter": 1, "logLevel": 1, "$db": "test"})
    assert (reply["code"], reply["errmsg"]) == (13, "getParameter may only be run against the admin database.")


def test_set_parameter_returns_the_previous_value():
    assert run({"setParameter": 1, "logLevel": 2})["was"] == 0
    try:
        assert run({"getParameter": 1, "logLevel": 1})["logLevel"] == 2
    finally:
        run({"setParameter": 1, "logLevel": 0})


def test_set_parameter_errors_are_mongods():
    assert run({"setParameter": 1, "nope": 1})["errmsg"] == \
        "attempted to set unrecognized parameter [nope], use help:true to see options "
    assert run({"setParameter": 1, "featureCompatibilityVersion": "6.0"})["code"] == 20
    assert run({"setParameter": 1})["code"] == 72
    assert run({"setParameter": 1, "logLevel": -1})["code"] == 2


def test_get_log_startup_warnings_is_empty():
    assert run({"getLog": "startupWarnings"}) == {"totalLinesWritten": 0, "log": [], "ok": 1.0}


def test_get_log_names_global_and_unknown():
    assert run({"getLog": "*"})["names"] == ["global", "startupWarnings"]
    assert run({"getLog": "global"}, server=FakeServer())["totalLinesWritten"] == 1
    assert run({"getLog": "nope"})["code"] == 96


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


def _op(opid: int, cmd: dict) -> OpInfo:
    return OpInfo(opid=opid, connection_id=4, client="127.0.0.1:9", command=cmd,
                  ctx=CommandContext(engine=None), client_metadata={"driver": {"name": "t"}})


def test_current_op_lists_in_flight_operations():
    server = FakeServer([_op(11, {"find": "c", "filter": {}, "$db": "test"})])
    [entry] = run({"currentOp": 1}, server=server)["inprog"]
    assert entry["opid"] == 11 and entry["op"] == "query" and entry["ns"] == "test.c"
    assert entry["desc"] == "conn4" and entry["active"] is True
    assert entry["clientMetadata"] == {"driver": {"name": "t"}}


def test_current_op_filters_by_field():
    server = FakeServer([_op(1, {"find": "c", "$db": "t"}), _op(2, {"insert": "c", "$db": "t"})])
    assert [e["opid"] for e in run({"currentOp": 1, "op": "insert"}, server=server)["inprog"]] == [2]


def test_kill_op_marks_the_operation_killed():
    op = _op(5, {"aggregate": "c", "$db": "t"})
    server = FakeServer([op])
    assert run({"killOp": 1, "op": 5}, server=server) == {"info": "attempting to kill op", "ok": 1.0}
    assert op.ctx.killed and server.killed == [5]
    assert run({"killOp": 1}, server=server)["code"] == 2


def test_current_op_truncates_large_commands():
    server = FakeServer([_op(3, {"insert": "c", "documents": [{"pad": "x" * 100}] * 50, "$db": "t"})])
    [entry] = run({"currentOp": 1}, server=server)["inprog"]
    assert list(entry["command"]) == ["$truncated"] and len(entry["command"]["$truncated"]) <= 1024
    assert entry["ns"] == "t.c" and entry["op"] == "insert"


def test_embedded_current_op_is_empty():
    assert run({"currentOp": 1})["inprog"] == []


def test_sessions_commands():
    session = run({"startSession": 1})
    assert isinstance(session["id"]["id"], Binary) and session["id"]["id"].subtype == 4
    assert session["timeoutMinutes"] == 30
    assert run({"endSessions": [session["id"]]}) == {"ok": 1.0}
    assert run({"refreshSessions": [session["id"]]})["ok"] == 1.0
    assert run({"killSessions": []})["ok"] == 1.0
    assert run({"endSessions": 1})["code"] == 14


def test_repl_set_get_status_on_a_standalone_is_76():
    reply = run({"replSetGetStatus": 1})
    assert (reply["code"], reply["codeName"], reply["errmsg"]) == (76, "NoReplicationEnabled",
                                                                   "not running with --replSet")


def test_log_component_verbosity_follows_log_level():
    try:
        reply = run({"setParameter": 1, "logComponentVerbosity": {"verbosity": 1, "command": {"verbosity": 2}}})
        assert reply["was"]["verbosity"] == 0
        got = run({"getParameter": 1, "logComponentVerbosity": 1, "logLevel": 1})
        assert got["logLevel"] == 1
        assert got["logComponentVerbosity"]["command"] == {"verbosity": 2}
        assert got["logComponentVerbosity"]["storage"] == {"verbosity": -1}
        assert run({"setParameter": 1, "logComponentVerbosity": {"nope": 1}})["code"] == 2
    finally:
        run({"setParameter": 1, "logComponentVerbosity": {"verbosity": 0, "command": {"verbosity": -1}}})
    assert run({"getParameter": 1, "logLevel": 1})["logLevel"] == 0


def test_profile_reads_and_sets_slowms():
    from ginkgodb.commands.profile import PROFILE
    before = PROFILE.slowms
    try:
        assert run({"profile": -1, "$db": "test"}) == {"was": 0, "slowms": before, "sampleRate": 1.0, "ok": 1.0}
        assert run({"profile": 0, "slowms": 7, "$db": "test"})["slowms"] == before
        assert PROFILE.slowms == 7
        assert run({"profile": 1, "$db": "test"})["code"] == 238
        assert run({"profile": 0, "sampleRate": 2, "$db": "test"})["code"] == 2
    finally:
        PROFILE.slowms = before
