"""The text access method: its catalog entry, its keys kept with every write in the same
transaction as the document, and the planner's view of `$text` (docs/design/text-index.md)."""
from __future__ import annotations

import bson
import pytest

from ginkgodb.commands import CommandContext, dispatch
from ginkgodb.engine import writes
from ginkgodb.engine.access import TextAccess, access_method, kind_of
from ginkgodb.engine.catalog import IndexMeta
from ginkgodb.errors import CommandError
from ginkgodb.planner.text_plans import has_text, plan_text
from ginkgodb.query.text import index_keys
from ginkgodb.storage.kv import prefix_end


def run(engine, cmd):
    return dispatch(CommandContext(engine=engine), {**cmd, "$db": "db"})


def _entries(engine, ix) -> list[bytes]:
    with engine.kv.begin() as txn:
        return [k[len(ix.prefix):] for k, _ in txn.scan(ix.prefix, prefix_end(ix.prefix))]


def _expected(engine, state, ix) -> list[bytes]:
    from ginkgodb.engine import layout
    with engine.kv.begin() as txn:
        docs = {layout.rid_of_record_key(k): bson.decode(v)
                for k, v in txn.scan(state.record_prefix, prefix_end(state.record_prefix))}
    return sorted(key + layout.rid_bytes(rid) for rid, d in docs.items() for key in index_keys(ix.spec, d))


def test_kind_and_catalog_entry():
    assert kind_of({"title": "text"}) == kind_of({"$**": "text"}) == kind_of({"_fts": "text", "_ftsx": 1}) == "text"
    key, options = TextAccess.normalize("t", {"a": 1, "title": "text"}, {"weights": {"title": 2.9}})
    assert key == {"a": 1, "_fts": "text", "_ftsx": 1}
    assert options == {"weights": {"title": 2}, "default_language": "english", "language_override": "language",
                       "textIndexVersion": 3, "textKeyFormat": 1}
    meta = IndexMeta(7, "t", key, options)
    assert "textKeyFormat" not in meta.spec()
    access = access_method(meta, "db.c")
    assert isinstance(access, TextAccess) and access.spec.prefix == (("a", 1),)
    with pytest.raises(CommandError) as failure:
        access_method(IndexMeta(8, "t", key, {**options, "textKeyFormat": 2}), "db.c")
    assert failure.value.code == 238


def test_keys_follow_every_write_atomically(engine):
    run(engine, {"insert": "c", "documents": [{"_id": 1, "t": "red shoes"}, {"_id": 2, "t": "blue"}]})
    assert run(engine, {"createIndexes": "c", "indexes": [{"key": {"t": "text"}, "name": "t"}]})["ok"] == 1.0
    outcome = writes.insert(engine, "db", "c", [{"_id": 3, "t": "green hat"},
                                                {"_id": 4, "t": "x", "language": "klingon"},
                                                {"_id": 5, "t": "never"}])
    assert outcome.errors[0]["code"] == 17262  # ordered: the third is not tried
    run(engine, {"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$set": {"t": "red red boots"}}}]})
    reply = run(engine, {"update": "c", "updates": [{"q": {"_id": 2}, "u": {"$set": {"language": 1}}}]})
    assert reply["writeErrors"][0]["code"] == 17261
    run(engine, {"delete": "c", "deletes": [{"q": {"_id": 3}, "limit": 1}]})
    state = engine.collection("db", "c")
    ix = state.index("t")
    assert _entries(engine, ix) == _expected(engine, state, ix)
    found = run(engine, {"find": "c", "filter": {"$text": {"$search": "boot blue hat never"}}})
    assert sorted(d["_id"] for d in found["cursor"]["firstBatch"]) == [1, 2]


def test_a_lmdb_text_index_survives_reopening(tmp_path):
    from support.engines import make_kv

    from ginkgodb.engine import Engine
    engine = Engine(make_kv("lmdb", tmp_path))
    run(engine, {"insert": "c", "documents": [{"_id": 1, "t": "café au lait"}]})
    run(engine, {"createIndexes": "c", "indexes": [{"key": {"t": "text"}, "name": "t", "default_language": "french"}]})
    engine.close()
    engine = Engine(make_kv("lmdb", tmp_path))
    try:
        found = run(engine, {"find": "c", "filter": {"$text": {"$search": "CAFE"}}})
        assert [d["_id"] for d in found["cursor"]["firstBatch"]] == [1]
        assert engine.collection("db", "c").index("t").spec.default_language.name == "french"
    finally:
        engine.close()


def test_planner_finds_the_text_predicate(engine):
    assert not has_text({"a": 1, "$or": [{"b": 1}]})
    assert has_text({"$and": [{"a": 1}, {"$and": [{"$text": {"$search": "x"}}]}]})
    run(engine, {"insert": "c", "documents": [{"_id": 1}]})
    run(engine, {"createIndexes": "c", "indexes": [{"key": {"shop": 1, "t": "text"}, "name": "t"}]})
    indexes = engine.collection("db", "c").indexes
    plan = plan_text(indexes, {"$and": [{"shop": "a"}, {"$text": {"$search": "Shoes"}, "n": {"$gt": 1}}]})
    assert plan.prefix == ("a",) and plan.query.terms_for_bounds == ("shoe",)
    assert plan.residual == {"$and": [{"shop": "a"}, {"n": {"$gt": 1}}]}
    for filt, code in [({"$text": {"$search": "x"}}, 291), ({"shop": {"$in": ["a"]}, "$text": {"$search": "x"}}, 291)]:
        with pytest.raises(CommandError) as failure:
            plan_text(indexes, filt)
        assert failure.value.code == code
    with pytest.raises(CommandError) as failure:
        plan_text(indexes, {"shop": "a", "$text": {"$search": "x"}}, hint={"shop": 1})
    assert failure.value.code == 2
