"""Index kinds are access methods: a kind ginkgodb does not serve is refused at createIndexes
(never at the next insert), and the planner asks each index, whatever its kind."""
from __future__ import annotations

import pytest

from ginkgodb.commands import CommandContext, dispatch
from ginkgodb.engine.access import BtreeAccess, HashedAccess, access_method, kind_of
from ginkgodb.engine.catalog import IndexMeta


def run(engine, cmd):
    return dispatch(CommandContext(engine=engine), {**cmd, "$db": "db"})


@pytest.mark.parametrize("key", [{"a": 1, "attrs.$**": 1}, {"$**": 1, "b": 1}])  # compound wildcard
def test_unserved_kinds_are_refused_at_create_indexes_even_on_an_empty_collection(engine, key):
    reply = run(engine, {"createIndexes": "c", "indexes": [{"key": key, "name": "ix"}]})
    assert reply["ok"] == 0 and reply["code"] == 238, reply
    assert run(engine, {"insert": "c", "documents": [{"_id": 1, "title": "x"}]})["n"] == 1
    names = [ix["name"] for ix in run(engine, {"listIndexes": "c"})["cursor"]["firstBatch"]]
    assert names == ["_id_"]


def test_kind_rules_are_the_access_methods(engine):
    reply = run(engine, {"createIndexes": "c", "indexes": [{"key": {"a": "hashed"}, "name": "h",
                                                             "unique": True}]})
    assert reply["code"] == 67
    reply = run(engine, {"createIndexes": "c", "indexes": [{"key": {"a": "hashed", "b": "hashed"},
                                                             "name": "h"}]})
    assert reply["code"] == 31303
    reply = run(engine, {"createIndexes": "c", "indexes": [{"key": {"a": "nope"}, "name": "n"}]})
    assert reply["code"] == 67 and "Unknown index plugin 'nope'" in reply["errmsg"]


def test_access_method_per_kind():
    assert kind_of({"a": 1, "b": -1}) == "btree"
    assert kind_of({"a": "hashed"}) == "hashed"
    assert isinstance(access_method(IndexMeta(1, "a_1", {"a": 1}), "db.c"), BtreeAccess)
    hashed = access_method(IndexMeta(2, "a_h", {"a": "hashed"}), "db.c")
    assert isinstance(hashed, HashedAccess)
    assert hashed.keys({"a": 5}) == hashed.keys({"a": 5.0})  # numbers hash by value


def test_an_unserved_index_from_an_older_data_directory_serves_nothing_and_refuses_writes(engine):
    from ginkgodb.engine import writes
    from ginkgodb.errors import CommandError
    writes.insert(engine, "db", "c", [{"_id": 1, "title": "a"}])
    with engine.write() as batch:  # as an older version stored it, unchecked
        meta = batch.catalog.get("db", "c")
        legacy = IndexMeta(batch.alloc_id(), "title_text", {"title": "geoHaystack"})
        batch.save_meta(meta.evolve(indexes=list(meta.indexes) + [legacy]), "createIndexes")
    reply = run(engine, {"find": "c", "filter": {"title": "a"}})
    assert [d["_id"] for d in reply["cursor"]["firstBatch"]] == [1]  # planned without it
    outcome = writes.insert(engine, "db", "c", [{"_id": 2, "title": "b"}])
    assert outcome.errors and outcome.errors[0]["code"] == 238
    assert run(engine, {"dropIndexes": "c", "index": "title_text"})["ok"] == 1.0
    assert run(engine, {"insert": "c", "documents": [{"_id": 2}]})["n"] == 1
    del CommandError


def test_explain_describes_the_shortcut_plan_that_runs(engine):
    run(engine, {"insert": "c", "documents": [{"_id": i, "a": i, "b": i} for i in range(50)]})
    run(engine, {"createIndexes": "c", "indexes": [{"key": {"a": 1}, "name": "a_1"}]})
    reply = run(engine, {"explain": {"find": "c", "filter": {"a": {"$gte": 10}, "b": 12}},
                         "verbosity": "executionStats"})
    stage = reply["queryPlanner"]["winningPlan"]
    assert stage["stage"] == "FETCH" and stage["inputStage"]["stage"] == "IXSCAN"
    assert stage["inputStage"]["indexBounds"] == {"a": ["[10, inf.0]"]}
    assert reply["executionStats"]["nReturned"] == 1
    assert reply["executionStats"]["totalKeysExamined"] == 40
    reply = run(engine, {"explain": {"find": "c", "filter": {"_id": 3}}})
    assert reply["queryPlanner"]["winningPlan"]["stage"] == "IDHACK"
