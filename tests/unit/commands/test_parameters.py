"""getParameter and setParameter: mongod's parameters, their details and errors."""
from __future__ import annotations

import time

import pytest
from support.runner import run_without_engine as run

from ginkgodb.commands.server_parameters import PARAMETERS
from ginkgodb.errors import CommandError


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


def test_get_parameter_star_includes_enable_test_commands_and_the_ttl_period():
    reply = run({"getParameter": "*"})
    assert reply["enableTestCommands"] is False and reply["ttlMonitorSleepSecs"] == 60
    details = run({"getParameter": {"showDetails": True}, "enableTestCommands": 1})["enableTestCommands"]
    assert details == {"value": False, "settableAtRuntime": False, "settableAtStartup": True}


def test_enable_test_commands_is_set_at_startup_only():
    reply = run({"setParameter": 1, "enableTestCommands": 1})
    assert (reply["code"], reply["errmsg"]) == (20, "not allowed to change [enableTestCommands] at runtime")


def test_startup_parameters_parse_their_text():
    previous = PARAMETERS.value("enableTestCommands")
    try:
        PARAMETERS.set_at_startup("enableTestCommands", "1")
        assert PARAMETERS.value("enableTestCommands") is True
        PARAMETERS.set_at_startup("enableTestCommands", "false")
        assert PARAMETERS.value("enableTestCommands") is False
    finally:
        PARAMETERS.set("enableTestCommands", previous)
    with pytest.raises(CommandError, match='Illegal --setParameter parameter: "noSuchThing"'):
        PARAMETERS.set_at_startup("noSuchThing", "1")


@pytest.mark.parametrize("bad", [0, -5, 1.5, "x", True])
def test_ttl_monitor_sleep_secs_must_be_a_positive_integer(bad):
    reply = run({"setParameter": 1, "ttlMonitorSleepSecs": bad})
    assert reply["code"] == 2 and PARAMETERS.value("ttlMonitorSleepSecs") == 60


def test_the_ttl_monitor_follows_ttl_monitor_sleep_secs(tmp_path):
    import datetime

    from support.runner import Runner

    from ginkgodb.engine import Engine
    engine = Engine.open(None)
    try:
        runner = Runner(engine)
        runner({"createIndexes": "s", "indexes": [{"key": {"at": 1}, "name": "at_1", "expireAfterSeconds": 0}]})
        runner.insert("s", {"at": datetime.datetime(2000, 1, 1)})
        time.sleep(0.3)
        assert len(runner.find("s")) == 1  # the default period is a minute
        assert run({"setParameter": 1, "ttlMonitorSleepSecs": 1}) == {"was": 60, "ok": 1.0}
        deadline = time.monotonic() + 5
        while runner.find("s") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert runner.find("s") == []
    finally:
        run({"setParameter": 1, "ttlMonitorSleepSecs": 60})
        engine.close()
