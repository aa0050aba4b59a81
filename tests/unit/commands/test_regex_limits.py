"""Regular expressions cannot stall the server: maxTimeMS and the safety limit bound every match,
and a match releases the interpreter lock while it runs."""
from __future__ import annotations

import threading
import time

import pytest
from support.timing import bound

from ginkgodb.commands.server_parameters import PARAMETERS

#: catastrophic backtracking for the `regex` package (exponential in the length of the a's);
#: the issue's `(a+)+$` is not: `regex` recognises it
REDOS = "(a|a)+b"
VICTIM = "a" * 40


@pytest.fixture
def victim(run):
    run.insert("c", {"_id": 1, "s": VICTIM + "c"}, {"_id": 2, "s": "x"})
    return run


@pytest.fixture
def safety_limit_ms():
    """Lower the safety limit for the test (restored afterwards)."""
    def set_limit(ms: int) -> None:
        PARAMETERS.set("internalQueryRegexMatchTimeoutMS", ms)
    previous = PARAMETERS.value("internalQueryRegexMatchTimeoutMS")
    yield set_limit
    PARAMETERS.set("internalQueryRegexMatchTimeoutMS", previous)


def test_the_issues_pattern_answers_at_once(run):
    run.insert("c", {"_id": 1, "s": "a" * 25 + "b"})
    started = time.monotonic()
    assert run.find("c", {"s": {"$regex": "(a+)+$"}}, maxTimeMS=100) == []
    assert time.monotonic() - started < bound(1.0)


def test_redos_filter_with_max_time_ms_answers_50(victim):
    started = time.monotonic()
    reply = victim.error({"find": "c", "filter": {"s": {"$regex": REDOS}}, "maxTimeMS": 200})
    assert (reply["code"], reply["codeName"], reply["errmsg"]) == (50, "MaxTimeMSExpired", "operation exceeded time limit")
    assert time.monotonic() - started < bound(2.0)


def test_redos_filter_without_max_time_ms_hits_the_safety_limit(victim, safety_limit_ms):
    safety_limit_ms(200)
    started = time.monotonic()
    reply = victim.error({"find": "c", "filter": {"s": {"$regex": REDOS}}})
    assert (reply["code"], reply["codeName"]) == (51156, "Location51156")
    assert reply["errmsg"].startswith("Error occurred while executing the regular expression in $regex. "
                                      "Result code: match limit exceeded")
    assert "internalQueryRegexMatchTimeoutMS" in reply["errmsg"]
    assert time.monotonic() - started < bound(2.0)


def test_a_generous_max_time_ms_still_gets_the_safety_limit(victim, safety_limit_ms):
    safety_limit_ms(200)
    reply = victim.error({"find": "c", "filter": {"s": {"$regex": REDOS}}, "maxTimeMS": 60_000})
    assert reply["code"] == 51156


@pytest.mark.parametrize("op", ["$regexMatch", "$regexFind", "$regexFindAll"])
def test_redos_in_expressions(victim, safety_limit_ms, op):
    expr = {op: {"input": "$s", "regex": REDOS}}
    reply = victim.error({"aggregate": "c", "pipeline": [{"$project": {"m": expr}}], "cursor": {},
                          "maxTimeMS": 200})
    assert reply["code"] == 50
    safety_limit_ms(200)
    reply = victim.error({"aggregate": "c", "pipeline": [{"$project": {"m": expr}}], "cursor": {}})
    assert reply["code"] == 51156
    assert reply["errmsg"].startswith(f"Error occurred while executing the regular expression in {op}.")


def test_redos_in_expr_of_a_find_and_in_json_schema(victim):
    reply = victim.error({"find": "c", "filter": {"$expr": {"$regexMatch": {"input": "$s", "regex": REDOS}}},
                          "maxTimeMS": 200})
    assert reply["code"] == 50
    reply = victim.error({"find": "c", "filter": {"$jsonSchema": {"properties": {"s": {"pattern": REDOS}}}},
                          "maxTimeMS": 200})
    assert reply["code"] == 50


def test_redos_in_an_update_filter_changes_nothing(victim):
    reply = victim.raw({"update": "c", "updates": [{"q": {"s": {"$regex": REDOS}}, "u": {"$set": {"hit": 1}},
                                                    "multi": True}], "maxTimeMS": 200})
    assert reply["writeErrors"][0]["code"] == 50
    assert all("hit" not in d for d in victim.find("c"))


def test_killed_operation_stops_at_the_next_match(victim):
    victim.ctx.killed = True
    try:
        reply = victim.error({"find": "c", "filter": {"s": {"$regex": "x"}}})
    finally:
        victim.ctx.killed = False
    assert reply["code"] == 11601


def test_a_long_literal_pattern_compiles_and_matches_quickly(run):
    """`regex` builds a search table for a literal run in cubic time: the translation breaks runs."""
    run.insert("c", {"_id": 1, "s": "x" * 20_000}, {"_id": 2, "s": "c" * 20_000})
    started = time.monotonic()
    assert [d["_id"] for d in run.find("c", {"s": {"$regex": "c" * 16384}})] == [2]
    assert [d["_id"] for d in run.find("c", {"s": {"$regex": "\\Q" + "c" * 16000 + "\\E"}})] == [2]
    assert time.monotonic() - started < 5.0


def test_a_match_releases_the_interpreter_lock(victim):
    """While one thread runs a catastrophic match, another keeps running Python code."""
    ticks = []
    done = threading.Event()

    def count() -> None:
        while not done.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.001)

    counter = threading.Thread(target=count)
    counter.start()
    try:
        reply = victim.error({"find": "c", "filter": {"s": {"$regex": REDOS}}, "maxTimeMS": 500})
    finally:
        done.set()
        counter.join()
    assert reply["code"] == 50
    gaps = [b - a for a, b in zip(ticks, ticks[1:])]
    assert len(ticks) > 50 and max(gaps) < 0.25, (len(ticks), max(gaps, default=None))


def test_safety_limit_parameter_is_validated(admin):
    assert admin({"getParameter": 1, "internalQueryRegexMatchTimeoutMS": 1})["internalQueryRegexMatchTimeoutMS"] == 3000
    reply = admin.error({"setParameter": 1, "internalQueryRegexMatchTimeoutMS": 0})
    assert reply["code"] == 2
    reply = admin.error({"setParameter": 1, "internalQueryRegexMatchTimeoutMS": "x"})
    assert reply["code"] == 2
