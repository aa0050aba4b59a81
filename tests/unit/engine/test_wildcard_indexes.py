"""Wildcard indexes (`$**`, `a.$**`, `wildcardProjection`): keys per path as mongod keys them,
chosen by the planner for equality, range and `$exists` on covered paths, explained with the
expanded `$_path` bounds, and answering what a collection scan answers."""
from __future__ import annotations

import bson
import pytest

from ginkgodb.bsonutil.keycodec import decode_key
from ginkgodb.commands import CommandContext, dispatch
from ginkgodb.query.wildcard_keys import WildcardProjection, wildcard_keys


def run(engine, cmd):
    return dispatch(CommandContext(engine=engine), {**cmd, "$db": "db"})


def ok(engine, cmd):
    reply = run(engine, cmd)
    assert reply["ok"] == 1, reply
    return reply


def plain(doc):
    return bson.decode(doc.raw) if hasattr(doc, "raw") else doc


def find(engine, filt, **extra):
    reply = ok(engine, {"find": "c", "filter": filt, "batchSize": 10_000, **extra})
    return [plain(d) for d in reply["cursor"]["firstBatch"]]


def explain(engine, filt, **extra):
    return ok(engine, {"explain": {"find": "c", "filter": filt, **extra}, "verbosity": "executionStats"})


def ixscan(plan):
    while plan.get("stage") != "IXSCAN":
        if "inputStage" not in plan:
            return None
        plan = plan["inputStage"]
    return plan


def create(engine, key, **options):
    return run(engine, {"createIndexes": "c", "indexes": [{"key": key, "name": "wc", **options}]})


def keys_of(doc, field="$**", projection=None):
    keys, multikey = wildcard_keys(doc, WildcardProjection(field, projection))
    return [tuple(decode_key(k, [1, 1])) for k in keys], multikey


DOC = {"_id": 1, "a": {"b": 1, "c": [1, {"d": 2}, [3]]}, "e": {}, "f": [], "g": "x"}


def test_keys_are_path_value_pairs_as_mongod_keys_them():
    keys, multikey = keys_of(DOC)
    assert keys == [("a.b", 1), ("a.c", 1), ("a.c", [3]), ("a.c.d", 2), ("e", {}), ("f", []), ("g", "x")]
    assert multikey == {"a.c", "f"}   # no _id; array elements at the array's path
    assert keys_of(DOC, "a.$**")[0] == [("a.b", 1), ("a.c", 1), ("a.c", [3]), ("a.c.d", 2)]
    assert keys_of(DOC, projection={"a.c": 1})[0] == [("a.c", 1), ("a.c", [3]), ("a.c.d", 2)]
    assert keys_of(DOC, projection={"a": 0, "_id": 1})[0] == [("_id", 1), ("e", {}), ("f", []), ("g", "x")]
    assert ("a.b", 1) not in keys_of(DOC, projection={"a.b": 0})[0]


def test_projection_coverage():
    p = WildcardProjection("$**", {"a.b": 0})
    assert [p.covers(x) for x in ("a", "a.c", "a.b", "g", "_id")] == [False, True, False, True, False]
    p = WildcardProjection("a.$**")
    assert [p.covers(x) for x in ("a", "a.c", "ab", "g")] == [True, True, False, False]


DOCS = [{"_id": i, "attrs": {"color": ["red", "blue", "green"][i % 3], "size": i, "dims": {"w": i % 7}},
         "n": i, "tags": [i % 5, "t"]} for i in range(60)] + [
    {"_id": 100, "attrs": {"color": {"x": 1}}}, {"_id": 101, "attrs": "plain"}, {"_id": 102}]


@pytest.mark.parametrize("key", [{"$**": 1}, {"attrs.$**": 1}])
def test_chosen_without_a_hint_for_equality_and_range(engine, key):
    ok(engine, {"insert": "c", "documents": DOCS})
    assert create(engine, key)["ok"] == 1
    e = explain(engine, {"attrs.color": "red"})
    scan = ixscan(e["queryPlanner"]["winningPlan"])
    assert scan["indexName"] == "wc"
    assert scan["keyPattern"] == {"$_path": 1, "attrs.color": 1}
    assert scan["indexBounds"] == {"$_path": ['["attrs.color", "attrs.color"]'],
                                   "attrs.color": ['["red", "red"]']}
    assert e["executionStats"]["nReturned"] == 20 and e["executionStats"]["totalDocsExamined"] == 20
    scan = ixscan(explain(engine, {"attrs.size": {"$gt": 50, "$lte": 55}})["queryPlanner"]["winningPlan"])
    assert scan["indexBounds"]["attrs.size"] == ["(50, 55]"]
    e = explain(engine, {"attrs": {"$exists": True}, "n": {"$lt": 3}})
    scan = ixscan(e["queryPlanner"]["winningPlan"])
    assert scan["indexBounds"]["$_path"] == ['["attrs", "attrs"]', '["attrs.", "attrs/")']
    assert scan["indexBounds"]["attrs"] == ["[MinKey, MaxKey]"]
    assert sorted(d["_id"] for d in find(engine, {"attrs": {"$exists": True}})) == [d["_id"] for d in DOCS][:-1]


def test_multikey_paths_and_what_it_does_not_serve(engine):
    ok(engine, {"insert": "c", "documents": DOCS})
    assert create(engine, {"$**": 1})["ok"] == 1
    scan = ixscan(explain(engine, {"tags": 3})["queryPlanner"]["winningPlan"])
    assert scan["isMultiKey"] is True and scan["multiKeyPaths"] == {"$_path": [], "tags": ["tags"]}
    # null, $ne, $exists: false, object equality, positional paths: a collection scan, as mongod
    for filt in ({"n": None}, {"n": {"$ne": 3}}, {"n": {"$exists": False}}, {"attrs.color": {"x": 1}},
                 {"tags.0": 3}, {"_id": {"$gt": 5}}):
        plan = explain(engine, filt)["queryPlanner"]["winningPlan"]
        assert ixscan(plan) is None or ixscan(plan)["indexName"] != "wc", filt


def test_sort_served_only_on_the_scanned_single_valued_path(engine):
    ok(engine, {"insert": "c", "documents": DOCS})
    assert create(engine, {"$**": 1})["ok"] == 1
    e = explain(engine, {"n": {"$gte": 50}}, sort={"n": -1})
    plan = e["queryPlanner"]["winningPlan"]
    assert plan["stage"] == "FETCH" and ixscan(plan)["direction"] == "backward"
    assert [d["n"] for d in find(engine, {"n": {"$gte": 50}}, sort={"n": -1})] == list(range(59, 49, -1))
    plan = explain(engine, {"tags": 3}, sort={"tags": 1})["queryPlanner"]["winningPlan"]
    assert plan["stage"] == "SORT"   # multikey path: the index order is not the sort order
    plan = explain(engine, {"n": {"$gte": 50}}, sort={"attrs.size": 1})["queryPlanner"]["winningPlan"]
    assert plan["stage"] == "SORT"


FILTERS = [{"attrs.color": "red"}, {"attrs.size": {"$in": [3, 4, 99]}}, {"attrs.dims.w": {"$lt": 2}},
           {"attrs": {"$exists": True}}, {"attrs.dims": {"$exists": True}}, {"tags": {"$gt": 2}},
           {"tags": "t", "n": {"$lt": 10}}, {"attrs.color": {"$regex": "^b"}}, {"attrs": "plain"},
           {"$or": [{"n": 3}, {"attrs.color": "blue"}]}, {"attrs.color.x": 1}]


@pytest.mark.parametrize("key,options", [({"$**": 1}, {}), ({"attrs.$**": 1}, {}),
                                         ({"$**": 1}, {"wildcardProjection": {"attrs.dims": 0}}),
                                         ({"$**": -1}, {"wildcardProjection": {"tags": 1, "attrs.color": 1}})])
def test_answers_what_the_collection_scan_answers_through_writes(engine, key, options):
    ok(engine, {"insert": "c", "documents": DOCS[:30]})
    assert create(engine, key, **options)["ok"] == 1
    ok(engine, {"insert": "c", "documents": DOCS[30:]})
    ok(engine, {"update": "c", "updates": [{"q": {"n": {"$lt": 5}}, "u": {"$set": {"attrs.color": "blue"}},
                                            "multi": True}]})
    ok(engine, {"delete": "c", "deletes": [{"q": {"n": 7}, "limit": 1}]})
    for filt in FILTERS:
        want = sorted(d["_id"] for d in find(engine, filt, hint={"$natural": 1}))
        assert sorted(d["_id"] for d in find(engine, filt)) == want, filt
        hinted = run(engine, {"find": "c", "filter": filt, "hint": "wc", "batchSize": 10_000})
        if hinted["ok"]:
            assert sorted(plain(d)["_id"] for d in hinted["cursor"]["firstBatch"]) == want, filt
        else:   # no predicate the index can serve: mongod finds no expanded index for the hint
            assert hinted["code"] == 2 and "hint provided does not correspond" in hinted["errmsg"]
    assert run(engine, {"find": "c", "filter": {}, "hint": "wc"})["code"] == 2


@pytest.mark.parametrize("key,options,code", [
    ({"$**": 1}, {"unique": True}, 67), ({"$**": 1}, {"sparse": True}, 67),
    ({"$**": 1}, {"expireAfterSeconds": 10}, 67), ({"$**": "hashed"}, {}, 67), ({"$**": "2dsphere"}, {}, 67),
    ({"a.$**.$**": 1}, {}, 67), ({"$**": 0}, {}, 67),
    ({"$**": 1}, {"wildcardProjection": {"a": 1, "b": 0}}, 31254),
    ({"$**": 1}, {"wildcardProjection": {"a": 1, "b": "x"}}, 51271),
    ({"$**": 1}, {"wildcardProjection": {}}, 9), ({"a": 1}, {"wildcardProjection": {"a": 1}}, 2),
    ({"$**": "text"}, {"wildcardProjection": {"a": 1}}, 2), ({"a.$**": 1}, {"wildcardProjection": "x"}, 14),
    ({"a.$**": 1}, {"wildcardProjection": {"a": 1}}, 9),
    ({"a": 1, "b.$**": 1}, {}, 238),   # compound wildcard indexes (mongod 7.0): not served
])
def test_create_checks_as_mongod(engine, key, options, code):
    reply = create(engine, key, **options)
    assert reply["ok"] == 0 and reply["code"] == code, reply
    names = [ix["name"] for ix in ok(engine, {"listIndexes": "c"})["cursor"]["firstBatch"]] \
        if run(engine, {"listIndexes": "c"})["ok"] else ["_id_"]
    assert names == ["_id_"]


def test_list_indexes_shows_the_spec(engine):
    assert create(engine, {"$**": 1}, wildcardProjection={"a": 1, "_id": 0})["ok"] == 1
    spec = ok(engine, {"listIndexes": "c"})["cursor"]["firstBatch"][1]
    assert spec["key"] == {"$**": 1} and spec["wildcardProjection"] == {"a": 1, "_id": 0}
