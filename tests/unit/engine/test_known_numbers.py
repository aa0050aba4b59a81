"""The collections' numbers kept from the last commit (engine/known_numbers.py) against storage's:
every batch must start from what storage holds, whatever happened in between."""
from __future__ import annotations

import pytest
from support.runner import Runner

from ginkgodb.engine import Engine
from ginkgodb.engine.batch import read_numbers
from ginkgodb.storage.lmdb_engine import LmdbEngine


def stored(engine: Engine, db: str, coll: str) -> tuple[int, int, int]:
    meta = engine.catalog.get(db, coll)
    with engine.read() as view:
        n = read_numbers(view.snapshot, meta.id)
    return n.next_rid, n.count, n.size


def in_batch(engine: Engine, db: str, coll: str) -> tuple[int, int, int]:
    meta = engine.catalog.get(db, coll)
    with engine.write() as batch:
        n = batch.numbers(meta.id)
        return n.next_rid, n.count, n.size


def test_an_aborted_batch_leaves_the_kept_numbers_as_stored(engine):
    run = Runner(engine)
    run.insert("c", {"_id": 1}, {"_id": 2})
    before = stored(engine, "test", "c")
    meta = engine.catalog.get("test", "c")
    with pytest.raises(RuntimeError):
        with engine.write() as batch:
            numbers = batch.numbers(meta.id)
            numbers.count += 5
            numbers.next_rid += 5
            numbers.dirty = True
            raise RuntimeError("abort")
    assert in_batch(engine, "test", "c") == stored(engine, "test", "c") == before
    run.insert("c", {"_id": 3})
    assert stored(engine, "test", "c")[1] == 3 == run({"count": "c"})["n"]


def test_drop_and_recreate_count_from_nothing(engine):
    run = Runner(engine)
    run.insert("c", {"_id": 1}, {"_id": 2})
    run({"drop": "c"})
    run.insert("c", {"_id": 1})
    assert stored(engine, "test", "c")[1] == 1 == in_batch(engine, "test", "c")[1]
    assert run({"collStats": "c"})["count"] == 1


def _another_writer_inserts_ten(kv, engine, coll):
    """Commit, outside `engine` (as another process sharing the storage would), the numbers of
    `coll` as if 10 more documents had been inserted."""
    from ginkgodb.engine import layout
    from ginkgodb.engine.batch import CollectionNumbers
    meta = engine.catalog.get("test", coll)
    with kv.writer() as txn:
        n = read_numbers(txn, meta.id)
        txn.put(layout.coll_stats_key(meta.id), CollectionNumbers(n.next_rid + 10, n.count + 10, n.size).pack())
        txn.commit()


@pytest.fixture
def shared(tmp_path):
    """An engine on storage opened as shared between processes, and that storage."""
    kv = LmdbEngine(str(tmp_path / "data"), map_size=1 << 30, shared=True)
    engine = Engine(kv)
    yield kv, engine
    engine.close()


def test_another_writer_of_shared_storage_is_seen(shared):
    """A commit that did not go through this engine (as another process's would) moves the
    storage's version: the next batch reads the numbers again."""
    kv, engine = shared
    run = Runner(engine)
    run.insert("c", {"_id": 1})
    run.insert("c", {"_id": 2})
    _another_writer_inserts_ten(kv, engine, "c")
    assert in_batch(engine, "test", "c")[:2] == stored(engine, "test", "c")[:2] == (13, 12)
    run.insert("c", {"_id": 3})
    assert stored(engine, "test", "c")[:2] == (14, 13)


def test_numbers_after_many_single_writes_match_a_recount(engine):
    run = Runner(engine)
    for i in range(30):
        run.insert("c", {"_id": i, "pad": "x" * i})
        if i % 7 == 3:
            run({"delete": "c", "deletes": [{"q": {"_id": i - 1}, "limit": 1}]})
    next_rid, count, size = stored(engine, "test", "c")
    docs = run.find("c")
    assert count == len(docs) == run({"count": "c"})["n"]
    import bson
    assert size == sum(len(bson.encode(d)) for d in docs)
    assert in_batch(engine, "test", "c") == (next_rid, count, size)


def test_a_batch_after_another_writer_keeps_nothing_older(shared):
    """Another writer moved `a`; this engine's next batch writes only `b`: what it keeps after
    its commit must not include its older numbers of `a`."""
    kv, engine = shared
    run = Runner(engine)
    run.insert("a", {"_id": 1})
    run.insert("b", {"_id": 1})
    _another_writer_inserts_ten(kv, engine, "a")
    run.insert("b", {"_id": 2})
    assert in_batch(engine, "test", "a") == stored(engine, "test", "a")
    assert stored(engine, "test", "a")[1] == 11


def test_a_commit_that_fails_after_storage_committed_leaves_nothing_kept(engine, monkeypatch):
    """Storage committed, then its commit raised (as a full disk's reserve check can): the
    engine cannot tell what storage holds, so the next batch reads the numbers and catalog."""
    run = Runner(engine)
    run.insert("c", {"_id": 1})
    real_writer = engine.kv.writer

    class CommitsThenFails:
        def __init__(self, txn):
            self._txn = txn

        def __getattr__(self, name):
            return getattr(self._txn, name)

        def commit(self):
            self._txn.commit()
            raise RuntimeError("after the commit")

    monkeypatch.setattr(engine.kv, "writer", lambda reclaims=False: CommitsThenFails(real_writer(reclaims)))
    assert "after the commit" in run.error({"insert": "c", "documents": [{"_id": 2}]})["errmsg"]
    monkeypatch.setattr(engine.kv, "writer", real_writer)
    assert stored(engine, "test", "c")[:2] == (3, 2)      # storage has both documents
    run.insert("c", {"_id": 3})
    assert stored(engine, "test", "c")[:2] == (4, 3)
    assert sorted(d["_id"] for d in run.find("c")) == [1, 2, 3]
