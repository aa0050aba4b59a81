"""Point reads: a find that IDHACK answers and whose first batch ends it is read without a
cursor (engine/reads.find_point). It must answer, count and show exactly what the cursor path
does; a find that is not such a read takes the cursor path."""
from __future__ import annotations

import bson
import pytest
from bson.int64 import Int64

from ginkgodb.commands import CommandContext, dispatch
from ginkgodb.engine import FindRequest

POINT = {"singleBatch": True, "limit": 1}


def _first(run, coll, filt, **kw):
    return run({"find": coll, "filter": filt, **kw})["cursor"]


def _id_index_accesses(run, coll):
    stats = run({"aggregate": coll, "pipeline": [{"$indexStats": {}}], "cursor": {}})["cursor"]["firstBatch"]
    return next(s["accesses"]["ops"] for s in stats if s["name"] == "_id_")


def test_a_point_read_answers_as_the_cursor_path(run):
    run.insert("c", *({"_id": i, "v": f"x{i}", "a": [i, {"b": i}]} for i in range(20)))
    for value in (7, 19, 20, -1):
        point = _first(run, "c", {"_id": value}, **POINT)
        general = _first(run, "c", {"_id": {"$eq": value}}, **POINT)   # not an IDHACK: an IXSCAN
        assert point == general
        assert point["id"] == 0 and point["ns"] == "test.c"
    assert _first(run, "c", {"_id": 3})["firstBatch"] == [{"_id": 3, "v": "x3", "a": [3, {"b": 3}]}]


def test_the_engine_answers_only_what_idhack_would(engine, run):
    run.insert("c", {"_id": 1, "v": 1})
    run({"create": "v", "viewOn": "c", "pipeline": []})
    run({"create": "ci", "collation": {"locale": "en", "strength": 2}})
    run.insert("ci", {"_id": "a"})
    found = engine.find_point("test", "c", FindRequest(filter={"_id": 1}))
    assert bson.decode(found.doc.raw) == {"_id": 1, "v": 1}
    assert (found.ns, found.n_returned, found.exhausted, found.stats.examined()) == ("test.c", 1, True, (1, 1))
    assert found.stats.plan_summary == "IDHACK"
    missing = engine.find_point("test", "c", FindRequest(filter={"_id": 2}))
    assert missing.doc is None and missing.n_returned == 0 and missing.stats.examined() == (0, 0)
    for coll, req in (("none", FindRequest(filter={"_id": 1})),           # no collection
                      ("v", FindRequest(filter={"_id": 1})),              # a view
                      ("ci", FindRequest(filter={"_id": "A"})),           # a default collation
                      ("c", FindRequest(filter={"_id": 1}, projection={"v": 0})),
                      ("c", FindRequest(filter={"_id": 1}, sort={"v": 1})),
                      ("c", FindRequest(filter={"_id": {"$gt": 0}})),
                      ("c", FindRequest(filter={"_id": 1, "v": 1}))):
        assert engine.find_point("test", coll, req) is None, (coll, req)


def test_what_the_cursor_path_answers_differently_still_takes_it(run):
    run.insert("c", {"_id": 1})
    run({"create": "v", "viewOn": "c", "pipeline": [{"$set": {"seen": True}}]})
    run({"create": "ci", "collation": {"locale": "en", "strength": 2}})
    run.insert("ci", {"_id": "a"})
    assert _first(run, "v", {"_id": 1}, **POINT)["firstBatch"] == [{"_id": 1, "seen": True}]
    assert _first(run, "ci", {"_id": "A"}, **POINT)["firstBatch"] == [{"_id": "a"}]
    assert _first(run, "none", {"_id": 1}, **POINT) == {"firstBatch": [], "id": 0, "ns": "test.none"}
    # a batch of one without singleBatch: the cursor path, which leaves the cursor open
    cursor = _first(run, "c", {"_id": 1}, batchSize=1)
    assert cursor["firstBatch"] == [{"_id": 1}] and cursor["id"] != 0
    assert run({"getMore": cursor["id"], "collection": "c"})["cursor"] == {
        "nextBatch": [], "id": 0, "ns": "test.c"}
    zero = _first(run, "c", {"_id": 1}, batchSize=0)
    assert zero["firstBatch"] == [] and zero["id"] != 0


def test_a_point_read_counts_in_index_stats_and_query_stats(run, admin):
    run.insert("c", *({"_id": i} for i in range(3)))
    before = _id_index_accesses(run, "c")
    for _ in range(3):
        _first(run, "c", {"_id": 1}, **POINT)
    _first(run, "c", {"_id": 9}, **POINT)
    assert _id_index_accesses(run, "c") == before + 4
    stats = admin({"aggregate": 1, "pipeline": [{"$queryStats": {}}], "cursor": {}})["cursor"]["firstBatch"]
    [entry] = [s for s in stats if s["key"]["queryShape"]["cmdNs"] == {"db": "test", "coll": "c"}
               and s["key"]["queryShape"].get("filter") == {"_id": {"$eq": "?number"}}]
    metrics = entry["metrics"]
    assert metrics["execCount"] == 4
    assert metrics["keysExamined"]["sum"] == 3 and metrics["docsExamined"]["sum"] == 3
    assert metrics["docsReturned"]["sum"] == 3


def test_a_profiled_point_read_shows_its_plan(run):
    run.insert("c", {"_id": 1})
    run({"profile": 2})
    _first(run, "c", {"_id": 1}, **POINT)
    run({"profile": 0})
    [entry] = [e for e in run.find("system.profile") if e["op"] == "query"]
    assert (entry["planSummary"], entry["keysExamined"], entry["docsExamined"], entry["nreturned"]) == (
        "IDHACK", 1, 1, 1)


def test_a_point_read_in_a_transaction_sees_its_own_writes(engine):
    def run(cmd):
        return bson.decode(bson.encode(dispatch(CommandContext(engine=engine), {**cmd, "$db": cmd.get("$db", "db")})))

    run({"insert": "c", "documents": [{"_id": 1, "v": "before"}]})
    sid = run({"startSession": 1, "$db": "admin"})["id"]
    txn = {"lsid": sid, "txnNumber": Int64(1), "autocommit": False}
    assert run({"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$set": {"v": "inside"}}}],
                "startTransaction": True, **txn})["nModified"] == 1
    assert run({"insert": "c", "documents": [{"_id": 2}], **txn})["n"] == 1
    inside = [run({"find": "c", "filter": {"_id": i}, **POINT, **txn})["cursor"]["firstBatch"] for i in (1, 2)]
    assert inside == [[{"_id": 1, "v": "inside"}], [{"_id": 2}]]
    outside = [run({"find": "c", "filter": {"_id": i}, **POINT})["cursor"]["firstBatch"] for i in (1, 2)]
    assert outside == [[{"_id": 1, "v": "before"}], []]
    assert run({"abortTransaction": 1, **txn, "$db": "admin"})["ok"] == 1.0
    assert run({"find": "c", "filter": {"_id": 1}, **POINT})["cursor"]["firstBatch"] == [{"_id": 1, "v": "before"}]


@pytest.mark.parametrize("value", [1, 1.0, Int64(1)])
def test_numbers_of_every_type_find_the_same_document(run, value):
    run.insert("c", {"_id": 1, "v": "one"})
    assert _first(run, "c", {"_id": value}, **POINT)["firstBatch"] == [{"_id": 1, "v": "one"}]
