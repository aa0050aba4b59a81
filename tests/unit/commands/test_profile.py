"""profile and the profiler: levels per database, slowms, sampleRate, filters, and the entries
written to <db>.system.profile in mongod's shape."""
from __future__ import annotations

import datetime

import pytest
from support.runner import Runner

from ginkgodb.commands.profile import FILTER_NOTE, PROFILE


@pytest.fixture(autouse=True)
def restore_profile_settings():
    slowms, rate = PROFILE.slowms, PROFILE.sample_rate
    yield
    PROFILE.slowms, PROFILE.sample_rate = slowms, rate


def entries(run, **filt):
    return run.find("system.profile", filt)


def test_profile_reads_and_sets_the_settings(run):
    assert run({"profile": -1}) == {"was": 0, "slowms": PROFILE.slowms, "sampleRate": 1.0, "ok": 1.0}
    before = PROFILE.slowms
    assert run({"profile": 0, "slowms": 7})["slowms"] == before
    assert PROFILE.slowms == 7
    assert run({"profile": 1, "sampleRate": 0.5})["was"] == 0
    assert run({"profile": -1}) == {"was": 1, "slowms": 7, "sampleRate": 0.5, "ok": 1.0}
    assert run({"profile": 0})["was"] == 1


@pytest.mark.parametrize("cmd,code", [({"profile": 3}, 2), ({"profile": "x"}, 2), ({"profile": 0, "sampleRate": 2}, 2),
                                      ({"profile": 1, "filter": {"$bogus": 1}}, 2),
                                      ({"profile": 1, "filter": 5}, 14), ({"profile": 1, "slowms": "x"}, 14)])
def test_bad_settings_change_nothing(run, cmd, code):
    assert run.error(cmd)["code"] == code
    assert run({"profile": -1}) == {"was": 0, "slowms": PROFILE.slowms, "sampleRate": PROFILE.sample_rate, "ok": 1.0}


def test_profile_is_not_in_api_version_1(run):
    err = run.error({"profile": -1, "apiVersion": "1", "apiStrict": True})
    assert (err["code"], err["codeName"]) == (323, "APIStrictError")


def test_level_2_records_every_operation_in_the_databases_capped_profile_collection(run):
    run.insert("c", *({"_id": i, "a": i % 3} for i in range(6)))
    run({"createIndexes": "c", "indexes": [{"key": {"a": 1}, "name": "a_1"}]})
    assert run({"profile": 2})["was"] == 0
    run.find("c", {"a": 1})
    run.insert("c", {"_id": 10}, {"_id": 11})
    run({"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$set": {"x": 1}}},
                                    {"q": {"_id": 99}, "u": {"$set": {"x": 1}}, "upsert": True}]})
    run({"delete": "c", "deletes": [{"q": {"a": 2}, "limit": 0}]})
    run({"count": "c"})
    run({"profile": 0})
    found = entries(run)
    assert [(e["op"], e["ns"]) for e in found] == [
        ("query", "test.c"), ("insert", "test.c"), ("update", "test.c"), ("update", "test.c"),
        ("remove", "test.c"), ("command", "test.c"), ("command", "test.$cmd")]
    query, insert, update, upsert, remove, count, profile = found
    assert query["command"] == {"find": "c", "filter": {"a": 1}, "batchSize": 100000, "$db": "test"}
    assert (query["keysExamined"], query["docsExamined"], query["nreturned"], query["cursorExhausted"],
            query["planSummary"]) == (2, 2, 2, True, "IXSCAN { a: 1 }")
    for field in ("numYield", "locks", "responseLength", "protocol", "millis", "ts", "client", "allUsers", "user"):
        assert field in query, field
    assert isinstance(query["ts"], datetime.datetime) and query["client"] == "embedded"
    assert insert["ninserted"] == 2 and "documents" not in insert["command"]
    assert update["command"] == {"q": {"_id": 1}, "u": {"$set": {"x": 1}}, "multi": False, "upsert": False}
    assert (update["nMatched"], update["nModified"], update["planSummary"]) == (1, 1, "IDHACK")
    assert (upsert["nMatched"], upsert["nModified"], upsert["upsert"], upsert["nUpserted"]) == (0, 0, True, 1)
    assert (remove["command"], remove["ndeleted"], remove["keysExamined"]) == ({"q": {"a": 2}, "limit": 0}, 2, 2)
    assert count["command"]["count"] == "c" and profile["command"]["profile"] == 0
    options = run({"listCollections": 1, "filter": {"name": "system.profile"}})["cursor"]["firstBatch"][0]["options"]
    assert options == {"capped": True, "size": 1048576}


def test_get_more_entries_count_their_own_batch_and_show_the_originating_command(run):
    run.insert("c", *({"_id": i} for i in range(5)))
    run({"profile": 2})
    first = run({"find": "c", "batchSize": 2})["cursor"]
    run({"getMore": first["id"], "collection": "c", "batchSize": 2})
    run({"getMore": first["id"], "collection": "c", "batchSize": 2})
    run({"profile": 0})
    find, more, last = entries(run, ns="test.c")
    assert find["cursorid"] == first["id"] and "cursorExhausted" not in find
    assert more["op"] == "getmore" and more["originatingCommand"]["find"] == "c"
    assert (more["nreturned"], more["docsExamined"], last["nreturned"], last["docsExamined"]) == (2, 2, 1, 1)
    assert last["cursorExhausted"] is True and "cursorid" not in last


def test_failed_operations_are_recorded_with_their_error(run):
    run({"profile": 2})
    run.error({"find": "c", "filter": {"$bogus": 1}})
    run({"profile": 0})
    failed = entries(run, op="query")[0]
    assert (failed["ok"], failed["errCode"], failed["errName"]) == (0.0, 2, "BadValue")
    assert failed["errMsg"].startswith("unknown top level operator: $bogus.")


def test_the_profile_command_that_turns_profiling_on_is_not_recorded(run):
    run({"profile": 2})
    run({"profile": 2})  # this one starts at level 2
    run({"profile": 0})
    assert [e["command"]["profile"] for e in entries(run)] == [2, 0]


def test_levels_are_per_database_and_per_engine(run, engine):
    from ginkgodb.engine import Engine
    other_db = Runner(engine, db="other")
    run({"profile": 2})
    other_db.insert("c", {})
    run.insert("c", {})
    assert len(entries(run)) == 1 and other_db.find("system.profile") == []
    elsewhere = Engine.open(None)
    try:
        Runner(elsewhere).insert("c", {})
        assert Runner(elsewhere).find("system.profile") == []
    finally:
        elsewhere.close()
    run({"profile": 0})


def test_level_1_records_operations_at_least_slowms_long(run):
    run({"profile": 1, "slowms": 100000})
    run.insert("c", {})
    run({"profile": 1, "slowms": 0})
    run.insert("c", {})
    run({"profile": 0})
    assert [e["op"] for e in entries(run)] == ["command", "insert", "command"]


def test_level_1_samples_at_the_sample_rate(run):
    run({"profile": 1, "slowms": 0, "sampleRate": 0.0})
    for _ in range(5):
        run.insert("c", {})
    run({"profile": 0, "sampleRate": 1.0})
    assert [e["op"] for e in entries(run, op="insert")] == []


def test_a_filter_decides_at_level_1_instead_of_slowms_and_sample_rate(run):
    run.insert("c", *({"_id": i} for i in range(3)))
    reply = run({"profile": 1, "filter": {"op": "query", "nreturned": {"$gte": 2}}, "slowms": 100000,
                 "sampleRate": 0.0})
    assert reply["note"] == FILTER_NOTE and "filter" not in reply
    run.find("c")
    run.find("c", {"_id": 1})
    run.insert("c", {})
    again = run({"profile": -1})
    assert again["filter"] == {"op": "query", "nreturned": {"$gte": 2}} and again["note"] == FILTER_NOTE
    assert run({"profile": 1, "filter": "unset"})["filter"] == {"op": "query", "nreturned": {"$gte": 2}}
    assert "filter" not in run({"profile": 0})
    assert [(e["op"], e["nreturned"]) for e in entries(run)] == [("query", 3)]


def test_a_level_2_entry_records_the_client_and_app_name():
    from ginkgodb.commands import CommandContext, dispatch
    from ginkgodb.engine import Engine
    engine = Engine.open(None)
    try:
        ctx = CommandContext(engine=engine, client_address="10.1.2.3:5555",
                             client_metadata={"application": {"name": "shop"}})
        assert dispatch(ctx, {"profile": 2, "$db": "d"})["ok"] == 1.0
        dispatch(ctx, {"ping": 1, "$db": "d"})
        dispatch(ctx, {"profile": 0, "$db": "d"})
        ping = Runner(engine, db="d").find("system.profile", {"command.ping": 1})[0]
        assert (ping["client"], ping["appName"], ping["ns"]) == ("10.1.2.3", "shop", "d.$cmd")
    finally:
        engine.close()
