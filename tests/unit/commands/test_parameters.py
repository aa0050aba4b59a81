"""getParameter and setParameter: mongod's parameters, their details and errors."""
from __future__ import annotations

from support.runner import run_without_engine as run

from ginkgodb.commands.server_parameters import PARAMETERS


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
