"""Every command is declared: each field it accepts, ignores (with a reason) or refuses, its
privileges, its scheduling. Undeclared fields never reach a handler."""
from __future__ import annotations

import pytest

from ginkgodb.commands import COMMANDS, CommandContext, dispatch
from ginkgodb.commands.declare import Use
from ginkgodb.commands.generic import GENERIC


def _specs():
    seen = {}
    for spec in COMMANDS.values():
        seen[id(spec)] = spec
    return sorted(seen.values(), key=lambda s: s.name)


@pytest.mark.parametrize("spec", _specs(), ids=lambda s: s.name)
def test_every_declaration_is_complete(spec):
    assert spec.help
    assert spec.privileges or not spec.requires_auth, f"{spec.name} declares no privileges"
    for field in spec.fields.values():
        if field.use is not Use.ACCEPTED:
            assert field.reason or field.use is Use.UNIMPLEMENTED, f"{spec.name}.{field.name}: no reason"
        assert field.name not in GENERIC, f"{spec.name}.{field.name} is a generic field"


def test_generic_fields_each_say_what_they_do():
    assert all(g.does for g in GENERIC.values())


@pytest.fixture
def ctx(engine):
    return CommandContext(engine=engine)


def run(ctx, cmd):
    return dispatch(ctx, {**cmd, "$db": cmd.get("$db", "db")})


def test_unknown_fields_are_refused_before_anything_runs(ctx):
    reply = run(ctx, {"insert": "c", "documents": [{"_id": 1}], "bogus": 1})
    assert reply["code"] == 40415
    assert "BSON field 'insert.bogus' is an unknown field." == reply["errmsg"]
    assert run(ctx, {"count": "c"})["n"] == 0


def test_unimplemented_fields_answer_238_and_write_nothing(ctx):
    run(ctx, {"insert": "c", "documents": [{"_id": 1}]})
    reply = run(ctx, {"collMod": "c", "dryRun": True})
    assert reply["ok"] == 0 and reply["code"] == 238 and reply["codeName"] == "NotImplemented"
    reply = run(ctx, {"collMod": "c", "dryRun": True})
    assert reply["code"] == 238
    assert [dict(d) for d in run(ctx, {"find": "c"})["cursor"]["firstBatch"]] == [{"_id": 1}]


def test_ignored_fields_are_accepted(ctx):
    reply = run(ctx, {"find": "c", "filter": {}, "allowPartialResults": True, "readOnce": True})
    assert reply["ok"] == 1.0


def test_generic_field_checks(ctx):
    assert run(ctx, {"find": "c", "maxTimeMS": "x"})["code"] == 14
    assert run(ctx, {"find": "c", "maxTimeMS": -1})["code"] == 2
    assert run(ctx, {"find": "c", "writeConcern": {"w": 1}})["code"] == 72
    assert run(ctx, {"insert": "c", "documents": [{}], "writeConcern": {"w": "tagged"}})["code"] == 79
    assert run(ctx, {"insert": "c", "documents": [{}], "writeConcern": {"w": 2}})["code"] == 2
    for field in ({"txnNumber": 1}, {"startTransaction": True}, {"autocommit": False}):
        reply = run(ctx, {"insert": "c", "documents": [{"_id": 9}], **field})
        assert reply["code"] == 72, reply  # transaction fields need an lsid (and a txnNumber)
    assert run(ctx, {"find": "c", "filter": {"_id": 9}})["cursor"]["firstBatch"] == []


def test_api_strict_refuses_commands_outside_api_version_1(ctx):
    reply = run(ctx, {"distinct": "c", "key": "a", "apiVersion": "1", "apiStrict": True})
    assert reply["code"] == 323 and reply["codeName"] == "APIStrictError"
    reply = run(ctx, {"aggregate": 1, "pipeline": [], "cursor": {}, "apiVersion": "1", "apiStrict": True})
    assert reply["code"] == 323
    assert run(ctx, {"find": "c", "apiVersion": "1", "apiStrict": True})["ok"] == 1.0
    assert run(ctx, {"distinct": "c", "key": "a", "apiVersion": "1"})["ok"] == 1.0
    assert run(ctx, {"find": "c", "apiVersion": "2"})["code"] == 322
    assert run(ctx, {"find": "c", "apiStrict": True})["code"] == 322


def test_explain_parses_with_the_commands_own_declaration(ctx):
    reply = run(ctx, {"explain": {"find": "c", "filter": {}, "bogus": 1}})
    assert reply["code"] == 40415 and "find.bogus" in reply["errmsg"]
    reply = run(ctx, {"explain": {"count": "c", "query": {"a": 1}}, "verbosity": "queryPlanner"})
    assert reply["ok"] == 1.0 and reply["queryPlanner"]["namespace"] == "db.c"
    reply = run(ctx, {"explain": {"insert": "c", "documents": [{}]}})
    assert reply["code"] == 59


def test_scheduling_is_declared():
    from ginkgodb.commands import runs_inline

    class Kv:
        concurrent_readers = True

    class Eng:
        kv = Kv()

    assert runs_inline({"ping": 1}, Eng())
    assert runs_inline({"find": "c", "filter": {"_id": 1}}, Eng())
    assert runs_inline({"find": "c", "filter": {"a": 1}}, Eng())   # the plan then bounds it (FindRequest.bounded)
    assert not runs_inline({"find": "c", "filter": {"a": 1}, "sort": {"a": 1}}, Eng())
    assert not runs_inline({"find": "c", "filter": {"a": 1}, "batchSize": 1000}, Eng())
    assert runs_inline({"find": "c", "filter": {"a": 1}, "batchSize": 1000, "limit": 5}, Eng())
    assert not runs_inline({"find": "c", "filter": {"a": 1}, "readConcern": {"level": "local"}}, Eng())
    # a transaction's statement and a router's request: only by _id (inline_writes.OFF_THE_RULE)
    for fields in ({"txnNumber": 1, "lsid": {}}, {"shardVersion": {"e": 1}}):
        assert not runs_inline({"find": "c", "filter": {"a": 1}, **fields}, Eng())
        assert runs_inline({"find": "c", "filter": {"_id": 1}, **fields}, Eng())
    assert not runs_inline({"insert": "c", "documents": []}, Eng())
    assert not runs_inline({"noSuchCommand": 1}, Eng())
