"""Short reads run on the event loop (commands/find.py's `_short_read`): a find whose first
batch is bounded work. A find sent there whose plan is not bounded (a residual filter, a
collection scan, array keys, the full planner) stops before reading anything and runs in a
worker thread with the same answer, counted once."""
from __future__ import annotations

import pymongo
import pytest

from ginkgodb.server.testing import running_server


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running_server(str(tmp_path_factory.mktemp("inline-reads") / "data")) as address:
        yield address


@pytest.fixture(scope="module")
def coll(server):
    client = pymongo.MongoClient(*server, serverSelectionTimeoutMS=5000)
    coll = client.test_inline_reads.items
    coll.drop()
    coll.insert_many([{"_id": i, "sku": f"S{i}", "k": i % 50, "tags": [i % 3, 9], "s": "x" * (i % 7)}
                      for i in range(1000)])
    coll.create_index("sku", unique=True)
    coll.create_index("k")
    coll.create_index("tags")
    yield coll
    client.close()


def _ids(cursor):
    return sorted(d["_id"] for d in cursor)


def test_bounded_finds_run_on_the_loop(coll, in_worker):
    assert coll.find_one({"_id": 7})["sku"] == "S7"
    assert coll.find_one({"sku": "S8"})["_id"] == 8
    assert _ids(coll.find({"k": 3})) == list(range(3, 1000, 50))
    assert len(list(coll.find({"k": {"$lt": 4}}).limit(100))) == 80
    assert coll.find_one({"_id": 5000}) is None
    assert in_worker == []


def test_finds_of_unbounded_work_answer_from_a_worker(coll, in_worker):
    assert _ids(coll.find({"k": 3, "s": "xxx"})) == [i for i in range(3, 1000, 50) if i % 7 == 3]  # residual
    assert _ids(coll.find({"s": "xxxxxx"})) == [i for i in range(1000) if i % 7 == 6]            # no index
    assert len(_ids(coll.find({"tags": 2}))) == 333                                            # array keys
    assert _ids(coll.find({"$or": [{"k": 1}, {"sku": "S2"}]})) == sorted([*range(1, 1000, 50), 2])
    assert [d["_id"] for d in coll.find({"k": 3}).sort("_id", -1)][:2] == [953, 903]             # a sort
    assert len(list(coll.find({"k": {"$gte": 0}}, batch_size=500))) == 1000                       # a large batch
    # each once (their getMores run in workers too): five sent to the loop moved, the sort never went
    assert [name for name in in_worker if name == "find"] == ["find"] * 6


def test_a_find_moved_to_a_worker_is_counted_once(coll, in_worker):
    admin = coll.database.client.admin
    before = _exec_count(admin, "s")
    for _ in range(3):
        assert coll.find_one({"k": 4, "s": "xxxx"}) is not None
    assert [name for name in in_worker if name == "find"] == ["find"] * 3
    assert _exec_count(admin, "s") == before + 3


def _exec_count(admin, field):
    stats = list(admin.aggregate([{"$queryStats": {}}]))
    return sum(s["metrics"]["execCount"] for s in stats
               if s["key"]["queryShape"]["cmdNs"].get("coll") == "items"
               and field in (s["key"]["queryShape"].get("filter") or {}))


def test_a_shape_that_moved_goes_to_a_worker_at_once_until_the_catalog_changes(server, in_worker, monkeypatch):
    from ginkgodb.commands.inline_writes import OFF_LOOP
    client = pymongo.MongoClient(*server, serverSelectionTimeoutMS=5000)
    coll = client.test_inline_reads.shapes
    coll.drop()
    coll.insert_many([{"_id": i, "k": i % 5, "s": i % 3} for i in range(60)])
    coll.create_index("k")
    moved = []
    note = OFF_LOOP.note
    monkeypatch.setattr(OFF_LOOP, "note", lambda engine, cmd: (moved.append(cmd["filter"]), note(engine, cmd)))
    in_worker.clear()
    for s in (0, 1, 2):   # a residual filter: planned on the loop once, then sent to a worker at once
        assert _ids(coll.find({"k": 1, "s": s})) == [i for i in range(60) if i % 5 == 1 and i % 3 == s]
    assert moved == [{"k": 1, "s": 0}] and in_worker == ["find"] * 3
    assert _ids(coll.find({"k": 2})) == list(range(2, 60, 5)) and in_worker == ["find"] * 3   # another shape
    coll.create_index("s")   # a catalog change: the shape is tried on the loop again
    assert len(_ids(coll.find({"k": 1, "s": 1}))) == 4
    assert moved == [{"k": 1, "s": 0}, {"k": 1, "s": 1}]
    client.close()


def test_finds_in_a_transaction_stay_off_the_loop_unless_by_id(server, in_worker):
    """A transaction's statement that moved from the loop would fail the transaction: in a
    transaction only a find by `_id` runs there, as before."""
    client = pymongo.MongoClient(*server, serverSelectionTimeoutMS=5000)
    coll = client.test_inline_reads.txn
    coll.drop()
    coll.insert_many([{"_id": i, "k": i % 4} for i in range(20)])
    coll.create_index("k")
    in_worker.clear()
    with client.start_session() as s, s.start_transaction():
        coll.insert_one({"_id": 100, "k": 1}, session=s)
        assert len(list(coll.find({}, session=s))) == 21                      # a collection scan
        assert _ids(coll.find({"k": 1}, session=s)) == [1, 5, 9, 13, 17, 100]  # an exact index scan
        assert coll.find_one({"_id": 100}, session=s) == {"_id": 100, "k": 1}
    assert coll.count_documents({}) == 21
    assert [name for name in in_worker if name == "find"] == ["find", "find"]
    client.close()
