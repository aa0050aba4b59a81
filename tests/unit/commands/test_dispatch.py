"""The dispatch boundary: unknown commands and fields, admin-only commands, read concerns,
maxTimeMS, and failures that always come back as `ok: 0` replies, never as exceptions."""
from __future__ import annotations

import time

import bson
import pytest
from support.runner import run_without_engine

from ginkgodb.commands import COMMANDS, CommandContext, dispatch
from ginkgodb.commands.declare import CommandSpec
from ginkgodb.errors import StorageError


def test_unknown_command_and_unknown_field(run):
    assert run.error({"frobnicate": 1}) ["code"] == 59
    err = run.error({"find": "c", "bogus": 1})
    assert err["code"] == 40415 and err["errmsg"] == "BSON field 'find.bogus' is an unknown field."


def test_read_concerns_a_standalone_accepts(run):
    run.insert("c", {"_id": 1})
    for level in ("local", "available", "majority"):
        assert len(run.find("c", readConcern={"level": level})) == 1
    assert run.error({"find": "c", "readConcern": {"level": "snapshot"}})["code"] == 123
    assert run.error({"find": "c", "readConcern": {"level": "bogus"}})["code"] == 9
    assert run.error({"find": "c", "readConcern": {"afterClusterTime": __import__("bson").Timestamp(0, 1)}})["code"] == 20


def test_atlas_version_is_not_a_command():
    reply = run_without_engine({"atlasVersion": 1})
    assert (reply["code"], reply["errmsg"]) == (59, "no such command: 'atlasVersion'")


def test_admin_only_command_elsewhere_is_unauthorized(run):
    err = run.error({"listDatabases": 1})
    assert (err["code"], err["codeName"]) == (13, "Unauthorized")
    assert err["errmsg"] == "listDatabases may only be run against the admin database."


def test_read_concern_must_be_a_document(run):
    err = run.error({"find": "c", "readConcern": "local"})
    assert err["code"] == 14 and err["codeName"] == "TypeMismatch"


def test_negative_max_time_ms_is_bad_value(run):
    assert run.error({"find": "c", "maxTimeMS": -1})["code"] == 2


def test_an_expired_deadline_stops_the_command(engine, run):
    run.insert("c", *({"_id": i} for i in range(1100)))  # the scan checks its deadline every 1024 keys
    ctx = CommandContext(engine=engine, deadline=time.monotonic() - 1)
    reply = dispatch(ctx, {"find": "c", "filter": {"x": 1}, "$db": "test"})
    assert (reply["ok"], reply["code"], reply["codeName"]) == (0.0, 50, "MaxTimeMSExpired")
    assert reply["errmsg"] == "operation exceeded time limit"


def _register(monkeypatch, name, handler):
    monkeypatch.setitem(COMMANDS, name, CommandSpec(name, handler, "test command", {}, open_fields="test"))


def test_an_unexpected_exception_is_an_internal_error_reply(monkeypatch):
    def broken(ctx, cmd):
        raise ValueError("boom")
    _register(monkeypatch, "broken", broken)
    reply = run_without_engine({"broken": 1})
    assert reply == {"ok": 0.0, "errmsg": "internal error: ValueError: boom", "code": 1,
                     "codeName": "InternalError"}


@pytest.mark.parametrize("kind,code,name", [("closed", 91, "ShutdownInProgress"), ("map_full", 96, "OperationFailed"),
                                            ("locked", 20, "IllegalOperation"), ("corrupt", 1, "InternalError"),
                                            ("disk_full", 14031, "OutOfDiskSpace")])
def test_storage_errors_become_replies(monkeypatch, kind, code, name):
    def failing(ctx, cmd):
        raise StorageError(kind, "detail")
    _register(monkeypatch, "failing", failing)
    reply = run_without_engine({"failing": 1})
    assert reply["ok"] == 0.0 and (reply["code"], reply["codeName"]) == (code, name)
    assert "detail" in reply["errmsg"]


def test_invalid_bson_and_deep_nesting_become_replies(monkeypatch):
    def bad_bson(ctx, cmd):
        bson.decode(b"\x05\x00\x00\x00\x01")
    def deep(ctx, cmd):
        raise RecursionError()
    _register(monkeypatch, "badBson", bad_bson)
    _register(monkeypatch, "deep", deep)
    assert run_without_engine({"badBson": 1})["code"] == 22  # InvalidBSON
    assert run_without_engine({"deep": 1})["codeName"] == "Overflow"


def test_a_closed_engine_answers_shutdown_in_progress(engine):
    ctx = CommandContext(engine=engine)
    engine.close()
    reply = dispatch(ctx, {"find": "c", "$db": "test"})
    assert (reply["ok"], reply["code"], reply["codeName"]) == (0.0, 91, "ShutdownInProgress")


def test_replies_carry_ok_one(run):
    reply = run.raw({"ping": 1})
    assert reply == {"ok": 1.0}


def test_a_command_running_no_script_makes_no_javascript_operation(run, monkeypatch):
    from ginkgodb.query.js import operation
    made = []
    real = operation.Operation.__init__

    def counting(self, settings):
        made.append(settings)
        real(self, settings)

    monkeypatch.setattr(operation.Operation, "__init__", counting)
    run.insert("c", {"_id": 1, "a": 2})
    assert len(run.find("c", filter={"_id": 1})) == 1
    assert made == []
    assert len(run.find("c", filter={"$where": "this.a == 2"})) == 1
    assert len(made) == 1 and made[0]().enabled   # the command's own, with its front end's settings


def test_an_undeclared_field_of_parsed_arguments_is_an_attribute_error():
    args = COMMANDS["find"].parse({"find": "c", "$db": "db"}, "find")
    assert args.filter is None or isinstance(args.filter, dict)
    with pytest.raises(AttributeError):
        args.no_such_field  # noqa: B018
