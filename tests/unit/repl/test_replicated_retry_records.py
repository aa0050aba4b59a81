"""Retryable writes across members: the retry record rides on the write's oplog entry, a member
that applied it answers a retry as the original did (the write is not applied twice), and a
rollback of the write takes its record back to the session's previous one."""
from __future__ import annotations

import uuid

import bson
import pytest
from bson.binary import Binary
from bson.int64 import Int64
from support.engines import make_kv
from support.runner import Runner

from ginkgodb.engine import Engine


def raw_entries(engine) -> list[bytes]:
    return [bson.encode(d) for d in Runner(engine, db="local").find("oplog.rs", {})]


@pytest.fixture
def pair(engine, tmp_path):
    other = Engine(make_kv("memory", tmp_path / "secondary"))
    yield engine, other
    other.close()


def session() -> dict:
    return {"id": Binary(uuid.uuid4().bytes, 4)}


def strip(reply: dict) -> dict:
    return {k: v for k, v in reply.items() if k not in ("operationTime", "$clusterTime", "opTime", "electionId")}


def test_a_retry_on_the_member_that_applied_the_write_answers_as_the_original(pair):
    primary, secondary = pair
    run, other = Runner(primary), Runner(secondary)
    run.insert("c", {"_id": 1, "n": 0})
    lsid = session()
    inserted = run({"insert": "c", "documents": [{"_id": 2}, {"_id": 3}], "lsid": lsid, "txnNumber": Int64(1)})
    updated = run({"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$inc": {"n": 1}}},
                                              {"q": {"_id": 9}, "u": {"$set": {"n": 5}}, "upsert": True}],
                   "lsid": lsid, "txnNumber": Int64(2)})
    fam_lsid = session()
    modified = run({"findAndModify": "c", "query": {"_id": 1}, "update": {"$inc": {"n": 10}},
                    "lsid": fam_lsid, "txnNumber": Int64(7)})
    entries = raw_entries(primary)
    last = [bson.decode(e) for e in entries][-1]
    assert last["retryResult"]["txnNumber"] == 7 and "lsid" in last
    secondary.apply_oplog(entries)
    # the write's original reply, and nothing applied twice
    assert strip(other({"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$inc": {"n": 1}}},
                                                   {"q": {"_id": 9}, "u": {"$set": {"n": 5}}, "upsert": True}],
                        "lsid": lsid, "txnNumber": Int64(2)})) == strip(updated)
    assert strip(other({"findAndModify": "c", "query": {"_id": 1}, "update": {"$inc": {"n": 10}},
                        "lsid": fam_lsid, "txnNumber": Int64(7)})) == strip(modified)
    assert modified["value"] == {"_id": 1, "n": 1}           # the pre-image, as the first attempt
    assert other.find("c", {"_id": 1}) == [{"_id": 1, "n": 11}]
    # an older txnNumber than the replicated record is refused as on the member that ran it
    old = other.error({"insert": "c", "documents": [{"_id": 2}], "lsid": lsid, "txnNumber": Int64(1)})
    assert old["codeName"] == "TransactionTooOld"
    assert inserted["n"] == 2 and len(other.find("c", {})) == 4


def test_a_rolled_back_write_takes_its_record_back(pair):
    primary, secondary = pair
    run = Runner(primary)
    lsid = session()
    first = run({"insert": "c", "documents": [{"_id": 1}], "lsid": lsid, "txnNumber": Int64(1)})
    common = primary.oplog.last_ts
    run({"insert": "c", "documents": [{"_id": 2}], "lsid": lsid, "txnNumber": Int64(2)})
    other_lsid = session()
    run({"insert": "c", "documents": [{"_id": 3}], "lsid": other_lsid, "txnNumber": Int64(1)})
    primary.roll_back_oplog(common, [("test", "c", 2, None), ("test", "c", 3, None)])
    key = lsid["id"]
    stored = primary.sessions.stored_retryable(bytes(key))
    assert stored is not None and stored["txnNumber"] == 1
    assert primary.sessions.stored_retryable(bytes(other_lsid["id"])) is None
    # on a fresh member (no session in memory) the write of txnNumber 2 runs again
    secondary.apply_oplog(raw_entries(primary))
    other = Runner(secondary)
    assert strip(other({"insert": "c", "documents": [{"_id": 1}], "lsid": lsid, "txnNumber": Int64(1)})) == strip(first)
    assert other({"insert": "c", "documents": [{"_id": 2}], "lsid": lsid, "txnNumber": Int64(2)})["n"] == 1
    assert sorted(d["_id"] for d in other.find("c", {})) == [1, 2]


class _FakeOplog:
    def __init__(self, engine) -> None:
        self.engine = engine

    def find(self, filt, projection, sort):
        # what the source's server answers: its entries that carry a retry record, up to the start
        docs = Runner(self.engine, db="local").find("oplog.rs", filt, sort={"$natural": 1})
        return [{k: d[k] for k in projection if k in d} for d in docs]


def test_an_initial_sync_copies_the_sessions_retry_records(pair):
    from ginkgodb.repl.initial_sync import retry_record_entries
    primary, secondary = pair
    run = Runner(primary)
    lsid, other_lsid = session(), session()
    run({"insert": "c", "documents": [{"_id": 1}], "lsid": lsid, "txnNumber": Int64(1)})
    second = run({"insert": "c", "documents": [{"_id": 2}], "lsid": lsid, "txnNumber": Int64(2)})
    start = primary.oplog.last_ts
    run({"insert": "c", "documents": [{"_id": 3}], "lsid": other_lsid, "txnNumber": Int64(1)})   # after the start
    entries = retry_record_entries({"oplog.rs": _FakeOplog(primary)}, start)
    assert len(entries) == 1                       # the newest record of the one session before the start
    secondary.apply_oplog(entries, logged=False)
    assert secondary.oplog.last_ts is None           # nothing logged
    assert secondary.sessions.stored_retryable(bytes(lsid["id"]))["txnNumber"] == 2
    assert secondary.sessions.stored_retryable(bytes(other_lsid["id"])) is None
    Runner(secondary).insert("c", {"_id": 2})      # the copied data
    again = Runner(secondary)({"insert": "c", "documents": [{"_id": 2}], "lsid": lsid, "txnNumber": Int64(2)})
    assert strip(again) == strip(second)


def test_an_initial_sync_copies_committed_transactions_records(pair):
    from ginkgodb.repl.initial_sync import retry_record_entries
    primary, secondary = pair
    run = Runner(primary)
    lsid, retried = session(), session()
    run({"insert": "c", "documents": [{"_id": 0}], "lsid": retried, "txnNumber": Int64(1)})
    _transaction(run, lsid, 4, {"_id": 1})
    _transaction(run, retried, 2, {"_id": 2})          # a transaction after a retryable write
    entries = retry_record_entries({"oplog.rs": _FakeOplog(primary)}, primary.oplog.last_ts)
    assert len(entries) == 2
    secondary.apply_oplog(entries, logged=False)
    for key, n in ((lsid, 4), (retried, 2)):
        assert secondary.sessions.stored_retryable(bytes(key["id"])) == {"txnNumber": n, "committedTransaction": True}
    again = Runner(secondary)({"commitTransaction": 1, "lsid": lsid, "txnNumber": Int64(4), "autocommit": False,
                               "$db": "admin"})
    assert again["ok"] == 1.0


def _transaction(run, lsid, n: int, doc: dict) -> dict:
    run({"insert": "c", "documents": [doc], "lsid": lsid, "txnNumber": Int64(n), "startTransaction": True,
         "autocommit": False})
    return run({"commitTransaction": 1, "lsid": lsid, "txnNumber": Int64(n), "autocommit": False, "$db": "admin"})


def test_a_commit_retried_on_the_member_that_applied_the_transaction_answers_ok(pair):
    """mongod's config.transactions says "committed" on every member: a driver that retries
    commitTransaction on a new primary gets ok, and its with_transaction does not run twice."""
    primary, secondary = pair
    run, other = Runner(primary), Runner(secondary)
    lsid = session()
    _transaction(run, lsid, 3, {"_id": 1})
    secondary.apply_oplog(raw_entries(primary))
    again = other({"commitTransaction": 1, "lsid": lsid, "txnNumber": Int64(3), "autocommit": False,
                   "$db": "admin"})
    assert again["ok"] == 1.0 and other.find("c", {}) == [{"_id": 1}]
    # the same number as a retryable write is refused as mongod refuses it
    refused = other.error({"insert": "c", "documents": [{"_id": 2}], "lsid": lsid, "txnNumber": Int64(3)})
    assert refused["codeName"] == "IncompleteTransactionHistory"
    # a transaction the member never applied is still unknown to it
    unknown = other.error({"commitTransaction": 1, "lsid": session(), "txnNumber": Int64(3),
                           "autocommit": False, "$db": "admin"})
    assert unknown["codeName"] == "NoSuchTransaction"


def test_a_rolled_back_transaction_takes_its_commit_record_away(pair):
    primary, secondary = pair
    run = Runner(primary)
    lsid = session()
    run.insert("c", {"_id": 0})
    common = primary.oplog.last_ts
    _transaction(run, lsid, 1, {"_id": 1})
    assert primary.sessions.stored_retryable(bytes(lsid["id"]))["committedTransaction"] is True
    secondary.apply_oplog(raw_entries(primary))
    assert secondary.sessions.stored_retryable(bytes(lsid["id"]))["committedTransaction"] is True
    secondary.roll_back_oplog(common, [("test", "c", 1, None)])
    assert secondary.sessions.stored_retryable(bytes(lsid["id"])) is None


def test_a_commit_retried_after_the_members_own_restart_answers_ok(tmp_path):
    """The committed transaction's record is written in the commit's storage transaction (mongod
    keeps config.transactions durably): after a restart the retried commit answers ok, not 251,
    and the transaction is not applied twice."""
    engine = Engine(make_kv("lmdb", tmp_path))
    lsid, other = session(), session()
    try:
        _transaction(Runner(engine), lsid, 5, {"_id": 1})
        Runner(engine)({"insert": "c", "documents": [{"_id": 2}], "lsid": other, "txnNumber": Int64(1),
                        "startTransaction": True, "autocommit": False})   # left open: lost with the restart
    finally:
        engine.close()
    engine = Engine(make_kv("lmdb", tmp_path))
    try:
        run = Runner(engine)
        again = run({"commitTransaction": 1, "lsid": lsid, "txnNumber": Int64(5), "autocommit": False,
                     "$db": "admin"})
        assert again["ok"] == 1.0 and run.find("c", {}) == [{"_id": 1}]
        assert run({"commitTransaction": 1, "lsid": lsid, "txnNumber": Int64(5), "autocommit": False,
                    "$db": "admin"})["ok"] == 1.0                          # and again
        refused = run.error({"insert": "c", "documents": [{"_id": 3}], "lsid": lsid, "txnNumber": Int64(5)})
        assert refused["codeName"] == "IncompleteTransactionHistory"
        aborted = run.error({"abortTransaction": 1, "lsid": lsid, "txnNumber": Int64(5), "autocommit": False,
                             "$db": "admin"})
        assert (aborted["code"], aborted["codeName"]) == (256, "TransactionCommitted")
        lost = run.error({"commitTransaction": 1, "lsid": other, "txnNumber": Int64(1), "autocommit": False,
                          "$db": "admin"})
        assert (lost["code"], lost["codeName"]) == (251, "NoSuchTransaction")
    finally:
        engine.close()
