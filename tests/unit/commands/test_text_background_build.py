"""Background text index builds (`textIndexBuild: "background"`, a ginkgodb extension):
createIndexes returns at once, `$text` answers correctly while the builder catches up, writes
during the build are indexed, and a build interrupted by a restart or a failed chunk resumes
from its stored state (engine/text_build.py)."""
from __future__ import annotations

import pytest
from support.engines import make_kv
from support.runner import Runner

from ginkgodb.engine import Engine, text_build
from ginkgodb.storage.kv import prefix_end

WORDS = ["red car", "blue tea", "green car", "old shoes"]
DOCS = [{"_id": i, "title": f"item {i} {WORDS[i % 4]}"} for i in range(300)]
SPEC = {"key": {"title": "text"}, "name": "t", "textIndexBuild": "background"}


def search(run, text, **opts):
    reply = run({"find": "c", "filter": {"$text": {"$search": text}}, "batchSize": 10000, **opts})
    return reply["cursor"]["firstBatch"]


def ids(docs):
    return sorted(d["_id"] for d in docs)


def expected(run, text):
    """What the words say, straight from the documents (the reference the index must meet)."""
    want = {"car": ("car",), "tea": ("tea",), "car shoes": ("car", "shoes")}[text]
    docs = run.find("c", {}, sort={"_id": 1})
    return [d["_id"] for d in docs if any(w in d["title"].split() for w in want)]


def building(run) -> list:
    stats = run({"aggregate": "c", "pipeline": [{"$indexStats": {}}], "cursor": {}})["cursor"]["firstBatch"]
    return [s for s in stats if s.get("building")]


def entries(engine, db="test", coll="c", name="t") -> set:
    state = engine.catalog.collection(db, coll)
    ix = state.index(name)
    with engine.kv.writer() as txn:
        return {k for k, _ in txn.scan(ix.prefix, prefix_end(ix.prefix))}


def expected_entries(engine, db="test", coll="c", name="t") -> set:
    import bson

    from ginkgodb.engine import record_format
    state = engine.catalog.collection(db, coll)
    ix = state.index(name)
    out = set()
    with engine.kv.writer() as txn:
        for key, value in txn.scan(state.record_prefix, prefix_end(state.record_prefix)):
            rid = state.rid_of_record_key(key)
            keys, _ = ix.keys(bson.decode(record_format.document(value)))
            out |= {ix.prefix + k + state.rids.suffix(rid) for k in keys}
    return out


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(text_build, "CHUNK", 40)


def test_reads_and_writes_during_the_build(run, engine, small_chunks):
    run.insert("c", *DOCS)
    with text_build.builds_paused():
        reply = run({"createIndexes": "c", "indexes": [SPEC]})
        assert reply["numIndexesAfter"] == 2
        [stats] = building(run)
        assert stats["buildProgress"] == {"done": 0, "total": 300}
        assert ids(search(run, "car")) == expected(run, "car")
        # writes while building: indexed at once, inside and beyond the unindexed range
        run.insert("c", {"_id": 1000, "title": "car"})
        run({"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$set": {"title": "car car"}}}]})
        run({"delete": "c", "deletes": [{"q": {"_id": 0}, "limit": 1}]})
        assert ids(search(run, "car")) == expected(run, "car")
        assert ids(search(run, "car shoes")) == expected(run, "car shoes")
        ranked = search(run, "car", projection={"s": {"$meta": "textScore"}}, sort={"s": {"$meta": "textScore"}},
                        limit=2)
        assert [(d["_id"], d["s"]) for d in ranked] == [(1, 1.5), (1000, 1.1)]
        plan = run.explain("c", {"$text": {"$search": "car"}})["queryPlanner"]["winningPlan"]
        assert plan["inputStage"]["inputStage"]["stage"] == "TEXT_CATCH_UP"
        # one chunk by hand: the answers stay the same halfway
        assert text_build.build_step(engine, "test", "c", _index_id(engine))
        assert building(run)[0]["buildProgress"]["done"] == 40
        assert ids(search(run, "car")) == expected(run, "car")
    assert engine.text_builder.wait(30)
    assert building(run) == []
    assert ids(search(run, "car")) == expected(run, "car")
    assert entries(engine) == expected_entries(engine)
    index = run({"listIndexes": "c"})["cursor"]["firstBatch"][1]
    assert index["textIndexBuild"] == "background" and "textBuildState" not in index
    plan = run.explain("c", {"$text": {"$search": "car"}})["queryPlanner"]["winningPlan"]
    assert plan["inputStage"]["inputStage"]["stage"] != "TEXT_CATCH_UP"


def _index_id(engine) -> int:
    return engine.catalog.collection("test", "c").index("t").meta.id


def test_a_failed_chunk_leaves_the_state_and_the_build_resumes(run, engine, small_chunks, monkeypatch):
    run.insert("c", *DOCS)
    with text_build.builds_paused():
        run({"createIndexes": "c", "indexes": [SPEC]})
        before = entries(engine)

        def failing(self, txn, keys):
            raise OSError("disk gone")
        access_type = type(engine.catalog.collection("test", "c").index("t"))
        original = access_type.add_entries
        monkeypatch.setattr(access_type, "add_entries", failing)
        with pytest.raises(OSError):
            text_build.build_step(engine, "test", "c", _index_id(engine))
        monkeypatch.setattr(access_type, "add_entries", original)
        assert entries(engine) == before   # nothing of the failed chunk
        assert building(run)[0]["buildProgress"]["done"] == 0
    assert engine.text_builder.wait(30)
    assert entries(engine) == expected_entries(engine)


def test_a_restart_mid_build_resumes_it(tmp_path, small_chunks):
    engine = Engine(make_kv("lmdb", tmp_path))
    run = Runner(engine)
    run.insert("c", *DOCS)
    with text_build.builds_paused():
        run({"createIndexes": "c", "indexes": [SPEC]})
        text_build.build_step(engine, "test", "c", _index_id(engine))
        text_build.build_step(engine, "test", "c", _index_id(engine))
        engine.close()   # the builder stops between chunks; what it wrote is committed
    engine = Engine(make_kv("lmdb", tmp_path))
    try:
        run = Runner(engine)
        # resumed at open, from the stored state (80 of 300 done)
        assert engine.text_builder.wait(30)
        assert building(run) == []
        assert ids(search(run, "tea")) == expected(run, "tea")
        assert entries(engine) == expected_entries(engine)
    finally:
        engine.close()


def test_dropping_the_index_or_collection_mid_build(run, engine, small_chunks):
    run.insert("c", *DOCS)
    with text_build.builds_paused():
        run({"createIndexes": "c", "indexes": [SPEC]})
        index_id = _index_id(engine)
        run({"dropIndexes": "c", "index": "t"})
        assert not text_build.build_step(engine, "test", "c", index_id)
        run({"createIndexes": "c", "indexes": [SPEC]})
        run({"drop": "c"})
    assert engine.text_builder.wait(30)


def test_the_option_is_checked(run):
    run.insert("c", *DOCS[:3])
    bad = run.error({"createIndexes": "c", "indexes": [{**SPEC, "textIndexBuild": "later"}]})
    assert bad["code"] == 67 and bad["codeName"] == "CannotCreateIndex"
    not_text = run.error({"createIndexes": "c", "indexes": [{"key": {"a": 1}, "name": "a",
                                                             "textIndexBuild": "background"}]})
    assert not_text["code"] == 197
    run({"createIndexes": "c", "indexes": [{**SPEC, "textIndexBuild": "foreground"}]})
    assert building(run) == []
    assert ids(search(run, "car")) == [0, 2]
    run({"create": "k", "clusteredIndex": {"key": {"_id": 1}, "unique": True}})
    clustered = run.error({"createIndexes": "k", "indexes": [SPEC]})
    assert clustered["code"] == 238


def test_validate_during_the_build(run, small_chunks):
    run.insert("c", *DOCS)
    with text_build.builds_paused():
        run({"createIndexes": "c", "indexes": [SPEC]})
        run({"update": "c", "updates": [{"q": {"_id": 7}, "u": {"$set": {"title": "car"}}}]})
        reply = run({"validate": "c"})
        assert reply["valid"] is True and reply["errors"] == []
        assert any("being built in the background" in w for w in reply["warnings"])
