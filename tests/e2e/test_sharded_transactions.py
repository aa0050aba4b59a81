"""Transactions and retryable writes through the router (docs/design/sharding.md, Transactions):
a single-shard transaction commits or aborts on the shard of its first statement, a statement
targeting another shard is refused with 238 and aborts the transaction, and a retried write with
the same lsid and txnNumber runs once even when the router splits it over both shards."""
from __future__ import annotations

import uuid

import pymongo
import pytest
from bson.binary import Binary
from bson.int64 import Int64
from e2e.test_sharded_cluster import sharded  # noqa: F401  (this module gets a cluster of its own)

from ginkgodb.router.shards import WirePool

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


@pytest.fixture(scope="module")
def split(sharded):  # noqa: F811
    """app.t sharded on {k: 1}: k < 50 on shard0000, k >= 50 on shard0001."""
    c = sharded["client"]
    c.admin.command("shardCollection", "app.t", key={"k": 1})
    c.admin.command("split", "app.t", middle={"k": 50})
    for point, to in ((0, "shard0000"), (50, "shard0001")):
        chunks = list(c.config.chunks.find({"ns": "app.t"}))
        owner = next(ch["shard"] for ch in chunks if (ch["min"]["k"] == 50) == (point == 50))
        if owner != to:
            c.admin.command("moveChunk", "app.t", find={"k": point}, to=to)
    return sharded


def test_a_single_shard_transaction_commits_with_with_transaction(split):
    c, shards = split["client"], split["shards"]
    coll = c.app.t

    def callback(session):
        coll.insert_one({"_id": 1, "k": 1}, session=session)
        coll.insert_one({"_id": 2, "k": 2}, session=session)
        coll.update_one({"k": 1}, {"$set": {"v": "x"}}, session=session)
        assert coll.find_one({"k": 1}, session=session)["v"] == "x"   # the transaction reads its own writes
        assert coll.find_one({"k": 1}) is None                         # others do not see them yet
        return coll.count_documents({"k": {"$lt": 10}}, session=session)
    with c.start_session() as session:
        assert session.with_transaction(callback) == 2
    assert sorted(d["_id"] for d in coll.find({"k": {"$lt": 10}})) == [1, 2]
    assert shards[0].app.t.count_documents({"k": {"$lt": 10}}) == 2 and shards[1].app.t.count_documents({}) == 0
    # an unsharded collection's transaction runs on the database's primary shard
    with c.start_session() as session, session.start_transaction():
        c.app.plain.insert_one({"_id": "a"}, session=session)
        assert [d["_id"] for d in c.app.plain.find({}, session=session)] == ["a"]
    assert c.app.plain.count_documents({}) == 1


def test_an_aborted_transaction_leaves_nothing(split):
    c = split["client"]
    coll = c.app.t

    class Boom(Exception):
        pass

    def callback(session):
        coll.insert_one({"_id": 10, "k": 10}, session=session)
        coll.delete_one({"k": 1}, session=session)
        raise Boom
    with c.start_session() as session, pytest.raises(Boom):
        session.with_transaction(callback)
    assert coll.find_one({"_id": 10}) is None and coll.find_one({"_id": 1}) is not None
    with c.start_session() as session:
        session.start_transaction()
        coll.insert_one({"_id": 11, "k": 11}, session=session)
        session.abort_transaction()
    assert coll.find_one({"_id": 11}) is None


def test_a_statement_on_a_second_shard_is_refused_and_aborts_the_transaction(split):
    c = split["client"]
    coll = c.app.t
    with c.start_session() as session:
        session.start_transaction()
        coll.insert_one({"_id": 20, "k": 20}, session=session)
        with pytest.raises(pymongo.errors.OperationFailure) as err:
            coll.insert_one({"_id": 70, "k": 70}, session=session)
        assert err.value.code == 238 and "more than one shard" in str(err.value)
        with pytest.raises(pymongo.errors.OperationFailure) as err:   # the transaction is gone
            coll.insert_one({"_id": 21, "k": 21}, session=session)
        assert err.value.code == 251
        with pytest.raises(pymongo.errors.OperationFailure):
            session.commit_transaction()
    assert coll.count_documents({"_id": {"$in": [20, 21, 70]}}) == 0
    with c.start_session() as session:
        session.start_transaction()
        with pytest.raises(pymongo.errors.OperationFailure) as err:
            coll.find_one({"v": "nothing"}, session=session)   # a broadcast: both shards
        assert err.value.code == 238
        session.abort_transaction()


def test_a_retried_write_runs_once_across_both_shards(split):
    c = split["client"]
    port = split["ports"][2]
    wire = WirePool(("127.0.0.1", port))
    lsid = {"id": Binary(uuid.uuid4().bytes, 4)}
    # ordered, alternating shards: each shard gets two commands, each with its own session part
    docs = [{"_id": 100 + i, "k": 30 + 40 * (i % 2) + i} for i in range(4)]
    cmd = {"insert": "t", "documents": docs, "ordered": True, "lsid": lsid, "txnNumber": Int64(1), "$db": "app"}
    first = wire.exchange(cmd)
    again = wire.exchange(cmd)   # the retry a driver sends after a lost reply
    assert first["n"] == 4 and again["n"] == 4 and "writeErrors" not in again
    assert c.app.t.count_documents({"_id": {"$gte": 100, "$lt": 104}}) == 4
    upd = {"update": "t", "updates": [{"q": {"k": 30}, "u": {"$inc": {"c": 1}}}], "lsid": lsid,
           "txnNumber": Int64(2), "$db": "app"}
    assert wire.exchange(upd)["nModified"] == 1 and wire.exchange(upd)["nModified"] == 1
    assert c.app.t.find_one({"k": 30})["c"] == 1
    fam = {"findAndModify": "t", "query": {"k": 71}, "update": {"$inc": {"c": 1}}, "new": True, "lsid": lsid,
           "txnNumber": Int64(3), "$db": "app"}
    assert wire.exchange(fam)["value"]["c"] == 1 and wire.exchange(fam)["value"]["c"] == 1
    assert c.app.t.find_one({"k": 71})["c"] == 1
    wire.close()
    # pymongo's own retryable writes go through the router as well
    retrying = pymongo.MongoClient(f"127.0.0.1:{port}", retryWrites=True)
    retrying.app.t.insert_many([{"_id": 200 + i, "k": i * 20} for i in range(5)])
    assert retrying.app.t.count_documents({"_id": {"$gte": 200}}) == 5
    retrying.close()
