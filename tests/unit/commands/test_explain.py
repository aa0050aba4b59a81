"""explain: the wrapped commands it accepts, its verbosities and its reply's sections."""
from __future__ import annotations

import pytest


@pytest.fixture
def indexed(run):
    run.insert("c", *({"_id": i, "a": i} for i in range(5)))
    run({"createIndexes": "c", "indexes": [{"key": {"a": 1}, "name": "a_1"}]})
    return run


def test_find_explain_has_mongods_sections(indexed):
    reply = indexed({"explain": {"find": "c", "filter": {"a": 2}}, "verbosity": "queryPlanner"})
    assert {"explainVersion", "queryPlanner", "command", "serverInfo", "serverParameters"} <= set(reply)
    assert "executionStats" not in reply
    plan = reply["queryPlanner"]["winningPlan"]
    assert plan["stage"] == "FETCH" and plan["inputStage"]["indexBounds"] == {"a": ["[2, 2]"]}
    assert reply["queryPlanner"]["namespace"] == "test.c"


def test_execution_stats_count_what_ran(indexed):
    reply = indexed({"explain": {"find": "c", "filter": {"a": {"$gte": 3}}}, "verbosity": "executionStats"})
    stats = reply["executionStats"]
    assert stats["nReturned"] == 2 and stats["totalKeysExamined"] == 2 and stats["totalDocsExamined"] == 2


@pytest.mark.parametrize("inner", [
    {"count": "c", "query": {"a": 1}},
    {"distinct": "c", "key": "a", "query": {"a": 1}},
    {"findAndModify": "c", "query": {"a": 1}, "remove": True},
    {"update": "c", "updates": [{"q": {"a": 1}, "u": {"$set": {"b": 1}}}]},
    {"delete": "c", "deletes": [{"q": {"a": 1}, "limit": 1}]},
    {"aggregate": "c", "pipeline": [{"$match": {"a": 1}}], "cursor": {}},
])
def test_explain_of_other_commands_plans_their_filter(indexed, inner):
    reply = indexed({"explain": inner, "verbosity": "queryPlanner"})
    assert "a_1" in str(reply["queryPlanner"]["winningPlan"])
    assert indexed.find("c", {"a": 1}) == [{"_id": 1, "a": 1}]  # explained writes write nothing


def test_explain_needs_a_nested_command(run):
    err = run.error({"explain": 1})
    assert (err["code"], err["errmsg"]) == (14, "BSON field 'explain.explain' is the wrong type 'int', "
                                                "expected type 'object'")
    err = run.error({"explain": {}})
    assert (err["code"], err["errmsg"]) == (9, "explain command requires a nested object")


def test_explain_of_an_unknown_command(run):
    err = run.error({"explain": {"frob": "c"}})
    assert (err["code"], err["errmsg"]) == (59, "Explain failed due to unknown command: frob")


def test_explain_of_a_bad_find_reports_the_finds_error(run):
    assert run.error({"explain": {"find": "c", "bogus": 1}})["code"] == 40415


def test_unknown_verbosity_is_refused(run):
    assert run.error({"explain": {"find": "c"}, "verbosity": "bogus"})["ok"] == 0.0
