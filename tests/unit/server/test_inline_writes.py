"""Short writes run on the event loop (commands/inline_writes.py): a transaction's statements
and its commit, insert_one, update_one and delete_one by _id; a write that would wait (for a
transaction holding its document, for another writer's lock) runs in a worker instead and keeps
its semantics, and the server keeps answering meanwhile."""
from __future__ import annotations

import threading
import time

import pymongo
import pytest
from pymongo.errors import OperationFailure

from ginkgodb.server.testing import running_server


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running_server(str(tmp_path_factory.mktemp("inline") / "data")) as address:
        yield address


def connect(server, **kw):
    return pymongo.MongoClient(*server, serverSelectionTimeoutMS=5000, **kw)


@pytest.fixture
def coll(server):
    client = connect(server)
    coll = client.test_inline.accounts
    coll.drop()
    coll.insert_many([{"_id": i, "balance": 100} for i in range(4)])
    yield coll
    client.close()


def test_short_writes_and_transactions_run_on_the_loop(coll, in_worker):
    coll.update_one({"_id": 0}, {"$inc": {"balance": 1}})
    coll.insert_one({"_id": 10, "balance": 0})
    coll.delete_one({"_id": 10})
    with coll.database.client.start_session() as s:
        def transfer(s):
            coll.update_one({"_id": 0}, {"$inc": {"balance": -5}}, session=s)
            coll.update_one({"_id": 1}, {"$inc": {"balance": 5}}, session=s)
            assert coll.find_one({"_id": 1}, session=s)["balance"] == 105
            coll.insert_one({"_id": 11, "balance": 0}, session=s)   # reserves record ids: a write batch
        s.with_transaction(transfer)
        s.start_transaction()
        coll.update_one({"_id": 2}, {"$inc": {"balance": 1}}, session=s)
        s.abort_transaction()
    assert in_worker == []
    assert [d["balance"] for d in coll.find(sort=[("_id", 1)])] == [96, 105, 100, 100, 0]


def test_longer_or_waiting_writes_run_in_a_worker(coll, in_worker):
    coll.update_many({}, {"$inc": {"balance": 1}})                      # many documents
    coll.update_one({"balance": 101}, {"$inc": {"balance": 1}})        # not by _id
    coll.insert_many([{"_id": 20}, {"_id": 21}])                        # several statements
    coll.with_options(write_concern=pymongo.WriteConcern(j=True)).insert_one({"_id": 22})   # flushes
    assert in_worker == ["update", "update", "insert", "insert"]


def test_a_write_waiting_for_a_transaction_moves_to_a_worker(server, coll, in_worker):
    """A transaction holds document 0; another connection's update of it, sent to the loop,
    would wait: it runs in a worker and waits there (applied once the transaction commits),
    while pings and other writes on the loop carry on. A second transaction touching the
    document still fails at once with WriteConflict."""
    holder, other, pinger = connect(server), connect(server), connect(server)
    try:
        accounts = holder.test_inline.accounts
        session = holder.start_session()
        session.start_transaction()
        accounts.update_one({"_id": 0}, {"$inc": {"balance": 10}}, session=session)

        done = threading.Event()

        def blocked_update():
            other.test_inline.accounts.update_one({"_id": 0}, {"$inc": {"balance": 1}})
            done.set()
        waiter = threading.Thread(target=blocked_update, daemon=True)
        waiter.start()
        deadline = time.monotonic() + 10
        while "update" not in in_worker and time.monotonic() < deadline:
            time.sleep(0.01)
        assert in_worker == ["update"]         # moved off the loop, where it waits
        latencies = []
        for _ in range(20):
            start = time.perf_counter()
            pinger.admin.command("ping")
            latencies.append(time.perf_counter() - start)
        assert max(latencies) < 0.5
        pinger.test_inline.accounts.update_one({"_id": 3}, {"$inc": {"balance": 1}})   # on the loop
        assert not done.is_set()               # still waiting for the transaction

        with pinger.start_session() as rival:
            rival.start_transaction()
            with pytest.raises(OperationFailure) as err:
                pinger.test_inline.accounts.update_one({"_id": 0}, {"$inc": {"balance": 100}}, session=rival)
            assert err.value.code == 112
            assert "TransientTransactionError" in err.value.details.get("errorLabels", [])
            rival.abort_transaction()

        session.commit_transaction()
        assert done.wait(10)
        waiter.join(10)
        assert accounts.find_one({"_id": 0})["balance"] == 111
        assert accounts.find_one({"_id": 3})["balance"] == 101
        assert in_worker == ["update"]
        session.end_session()
    finally:
        for c in (holder, other, pinger):
            c.close()


def test_holding_writes_never_waits_and_an_fsync_lock_waits_for_the_held_write(tmp_path):
    """Engine.hold_writes refuses at once while another thread writes; once held, an fsyncLock
    that arrives waits for the held write (the writer in flight), which commits without waiting
    for the lock it holds back; while fsync-locked nothing is held."""
    from ginkgodb.engine import Engine, refusing_waits
    engine = Engine.open(str(tmp_path / "data"))
    try:
        writing, finish = threading.Event(), threading.Event()

        def writer():
            with engine.write():
                writing.set()
                finish.wait(5)
        other = threading.Thread(target=writer)
        other.start()
        assert writing.wait(5)
        started = time.monotonic()
        assert not engine.hold_writes()
        assert time.monotonic() - started < 0.1
        finish.set()
        other.join(5)

        assert engine.hold_writes()
        locker = threading.Thread(target=engine.fsync_lock, daemon=True)
        locker.start()
        deadline = time.monotonic() + 5
        while not engine.fsync_locked and time.monotonic() < deadline:
            time.sleep(0.005)
        assert engine.fsync_locked and locker.is_alive()    # waiting for the held write
        with refusing_waits():
            engine.wait_writable()                           # the writer in flight goes on
            assert engine.insert("db", "c", [{"_id": 1}]).n == 1
        engine.release_writes()
        assert engine.catalog.get("db", "c") is not None     # committed
        locker.join(5)
        assert not locker.is_alive()
        assert not engine.hold_writes()                      # fsync-locked: writes wait elsewhere
        engine.fsync_unlock()
        assert engine.hold_writes()
        engine.release_writes()
    finally:
        engine.close()


def test_single_writes_of_a_bounded_plan_run_on_the_loop(server, in_worker):
    """update_one, delete_one and findAndModify by a unique key (whatever else the filter asks)
    or an exact index scan run on the loop; one whose target may lie after many index entries
    stops before writing anything and runs in a worker, with the same effect, once."""
    client = connect(server)
    coll = client.test_inline.keyed
    coll.drop()
    coll.insert_many([{"_id": i, "sku": f"S{i}", "k": i % 10, "n": 0, "tags": [i, 99]} for i in range(100)])
    coll.create_index("sku", unique=True)
    coll.create_index("k")
    coll.create_index("tags")
    in_worker.clear()
    assert coll.update_one({"sku": "S1"}, {"$inc": {"n": 1}}).modified_count == 1
    assert coll.update_one({"sku": "S2", "n": 0}, {"$inc": {"n": 1}}).modified_count == 1   # unique key + residual
    assert coll.update_one({"k": 3}, {"$inc": {"n": 1}}).modified_count == 1                # exact scan
    assert coll.find_one_and_update({"sku": "S4", "n": {"$gte": 0}}, {"$inc": {"n": 5}},
                                    return_document=pymongo.ReturnDocument.AFTER)["n"] == 5
    assert coll.delete_one({"sku": "S5"}).deleted_count == 1
    assert coll.update_one({"sku": "none"}, {"$set": {"n": 7}}, upsert=True).upserted_id is not None
    assert in_worker == []
    assert coll.update_one({"k": 6, "n": 0}, {"$inc": {"n": 1}}).modified_count == 1        # residual on k
    assert coll.update_one({"tags": 99}, {"$inc": {"n": 1}}).modified_count == 1            # array keys
    assert coll.delete_one({"n": 0, "_id": {"$gt": 90}}).deleted_count == 1                 # no shortcut
    assert coll.find_one_and_delete({"k": 7, "n": 0})["k"] == 7                             # residual on k
    assert in_worker == ["update", "update", "delete", "findAndModify"]
    assert coll.count_documents({}) == 98 and coll.count_documents({"n": {"$gt": 0}}) == 7
    client.close()


def test_the_bucket_patterns_upserts_run_on_the_loop(server, in_worker):
    """`{sensor, count: {$lt: 60}}` on `{sensor: 1, count: 1}`: the equality and the range both
    bound the scan (planner/fast.py), so the plan reads one entry a result and the upserts,
    those that fill a bucket and those that open one, stay on the loop; a later field's
    predicate the bounds cannot take leaves a residual, and that write moves."""
    client = connect(server)
    coll = client.test_inline.buckets
    coll.drop()
    coll.create_index([("sensor", 1), ("count", 1)])
    in_worker.clear()
    for j in range(130):
        result = coll.update_one({"sensor": 1, "count": {"$lt": 60}},
                                 {"$push": {"readings": j}, "$inc": {"count": 1}}, upsert=True)
        assert result.matched_count + (result.upserted_id is not None) == 1
    assert in_worker == []
    assert sorted(b["count"] for b in coll.find({"sensor": 1})) == [10, 60, 60]
    assert coll.update_one({"sensor": 1, "count": {"$in": [10]}}, {"$inc": {"count": 1}}).modified_count == 1
    assert in_worker == ["update"]
    client.close()
