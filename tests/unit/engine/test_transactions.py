"""Multi-document transactions and retryable writes through the commands layer, on both engines:
snapshot isolation, first writer wins, atomic commit, mongod's errors and labels."""
from __future__ import annotations

import threading
import time
import uuid

import bson
import pytest
from bson.binary import Binary
from bson.int64 import Int64

from ginkgodb.commands import CommandContext, dispatch
from ginkgodb.engine import SETTINGS


def lsid():
    return {"id": Binary(uuid.uuid4().bytes, 4)}


class Client:
    """Commands as a driver sends them; a transaction's fields per session."""

    def __init__(self, engine):
        self.engine = engine

    def run(self, cmd, db="db"):
        reply = dispatch(CommandContext(engine=self.engine), {**cmd, "$db": cmd.get("$db", db)})
        return bson.decode(bson.encode(reply))  # raw documents decoded, as a driver reads them

    def ok(self, cmd, db="db"):
        reply = self.run(cmd, db)
        assert reply["ok"] == 1.0, reply
        return reply

    def docs(self, coll, filt=None, **extra):
        return self.ok({"find": coll, "filter": filt or {}, **extra})["cursor"]["firstBatch"]


class Txn:
    def __init__(self, client, number=1):
        self.client, self.lsid, self.number, self.started = client, lsid(), number, False

    def run(self, cmd, db="db"):
        fields = {"lsid": self.lsid, "txnNumber": Int64(self.number), "autocommit": False}
        if not self.started:
            fields["startTransaction"] = True
            self.started = True
        return self.client.run({**cmd, **fields}, db)

    def ok(self, cmd, db="db"):
        reply = self.run(cmd, db)
        assert reply["ok"] == 1.0 and "writeErrors" not in reply, reply
        return reply

    def commit(self):
        return self.client.run({"commitTransaction": 1, "lsid": self.lsid, "txnNumber": Int64(self.number),
                                "autocommit": False}, "admin")

    def abort(self):
        return self.client.run({"abortTransaction": 1, "lsid": self.lsid, "txnNumber": Int64(self.number),
                                "autocommit": False}, "admin")


@pytest.fixture
def client(engine):
    c = Client(engine)
    c.ok({"insert": "a", "documents": [{"_id": 1, "v": 0}, {"_id": 2, "v": 0}]})
    return c


def test_commit_applies_everything_at_once_and_abort_nothing(client):
    t = Txn(client)
    t.ok({"update": "a", "updates": [{"q": {"_id": 1}, "u": {"$inc": {"v": 5}}}]})
    t.ok({"insert": "b", "documents": [{"_id": "x"}, {"_id": "y"}]})  # created inside the transaction
    assert client.docs("a", {"_id": 1}) == [{"_id": 1, "v": 0}]       # nobody else sees it yet
    assert t.ok({"find": "b", "filter": {}})["cursor"]["firstBatch"] == [{"_id": "x"}, {"_id": "y"}]
    assert t.commit()["ok"] == 1.0
    assert client.docs("a", {"_id": 1}) == [{"_id": 1, "v": 5}]
    assert client.ok({"count": "b"})["n"] == 2
    assert [c["name"] for c in client.ok({"listCollections": 1})["cursor"]["firstBatch"]] == ["a", "b"]
    t2 = Txn(client)
    t2.ok({"delete": "a", "deletes": [{"q": {}, "limit": 0}]})
    assert t2.abort()["ok"] == 1.0
    assert client.ok({"count": "a"})["n"] == 2


def test_a_transaction_reads_its_snapshot(client):
    t = Txn(client)
    assert t.ok({"find": "a", "filter": {"_id": 2}})["cursor"]["firstBatch"] == [{"_id": 2, "v": 0}]
    client.ok({"update": "a", "updates": [{"q": {"_id": 2}, "u": {"$set": {"v": 9}}}]})
    client.ok({"insert": "a", "documents": [{"_id": 3}]})
    assert t.ok({"find": "a", "filter": {}})["cursor"]["firstBatch"] == [{"_id": 1, "v": 0}, {"_id": 2, "v": 0}]
    counted = t.ok({"aggregate": "a", "pipeline": [{"$count": "n"}], "cursor": {}})
    assert counted["cursor"]["firstBatch"] == [{"n": 2}]
    assert t.commit()["ok"] == 1.0


def test_first_writer_wins_between_transactions(client):
    t1, t2 = Txn(client), Txn(client)
    t1.ok({"update": "a", "updates": [{"q": {"_id": 1}, "u": {"$inc": {"v": 1}}}]})
    reply = t2.run({"update": "a", "updates": [{"q": {"_id": 1}, "u": {"$inc": {"v": 1}}}]})
    assert reply["code"] == 112 and reply["errorLabels"] == ["TransientTransactionError"]
    reply = t2.commit()  # the conflict aborted it
    assert reply["code"] == 251 and "TransientTransactionError" in reply["errorLabels"]
    assert t1.commit()["ok"] == 1.0
    assert client.docs("a", {"_id": 1}) == [{"_id": 1, "v": 1}]


def test_a_write_committed_after_the_snapshot_conflicts(client):
    t = Txn(client)
    t.ok({"find": "a", "filter": {}})  # the snapshot is taken
    client.ok({"update": "a", "updates": [{"q": {"_id": 1}, "u": {"$set": {"v": 7}}}]})
    reply = t.run({"update": "a", "updates": [{"q": {"_id": 1}, "u": {"$inc": {"v": 1}}}]})
    assert reply["code"] == 112
    assert client.docs("a", {"_id": 1}) == [{"_id": 1, "v": 7}]  # no lost update


def test_duplicate_keys_inserted_by_two_transactions_conflict(client):
    t1, t2 = Txn(client), Txn(client)
    t1.ok({"insert": "a", "documents": [{"_id": 10}]})
    assert t2.run({"insert": "a", "documents": [{"_id": 10}]})["code"] == 112
    assert t1.commit()["ok"] == 1.0
    assert client.ok({"count": "a", "query": {"_id": 10}})["n"] == 1


def test_an_open_transaction_does_not_block_other_writers(client):
    t = Txn(client)
    t.ok({"update": "a", "updates": [{"q": {"_id": 1}, "u": {"$set": {"v": 1}}}]})
    # other documents, other collections: immediately
    client.ok({"update": "a", "updates": [{"q": {"_id": 2}, "u": {"$set": {"v": 2}}}]})
    client.ok({"insert": "c", "documents": [{"_id": 1}]})
    # the same document: the ordinary write waits for the transaction, then applies on top of it
    done = []
    writer = threading.Thread(target=lambda: done.append(client.ok(
        {"update": "a", "updates": [{"q": {"_id": 1}, "u": {"$inc": {"v": 10}}}]})))
    writer.start()
    time.sleep(0.2)
    assert not done, "the conflicting ordinary write did not wait"
    assert t.commit()["ok"] == 1.0
    writer.join(5)
    assert done and client.docs("a", {"_id": 1}) == [{"_id": 1, "v": 11}]


def test_record_ids_of_a_transaction_never_collide_with_concurrent_inserts(client):
    t = Txn(client)
    t.ok({"insert": "a", "documents": [{"_id": f"t{i}"} for i in range(100)]})
    client.ok({"insert": "a", "documents": [{"_id": f"o{i}"} for i in range(100)]})
    assert t.commit()["ok"] == 1.0
    ids = {d["_id"] for d in client.docs("a", batchSize=1000)}
    assert len(ids) == 202 and client.ok({"count": "a"})["n"] == 202


def test_catalog_changes_under_a_transaction_make_its_commit_conflict(client):
    t = Txn(client)
    t.ok({"insert": "a", "documents": [{"_id": 5, "k": 1}]})
    client.ok({"createIndexes": "a", "indexes": [{"key": {"k": 1}, "name": "k_1"}]})
    reply = t.commit()
    assert reply["code"] == 112 and "TransientTransactionError" in reply["errorLabels"]
    assert client.docs("a", {"k": 1}) == []


def test_transaction_errors_are_mongods(client):
    s = lsid()

    def run(cmd, **fields):
        return client.run({**cmd, "lsid": s, **fields})

    assert run({"find": "a"}, txnNumber=Int64(1), autocommit=False)["code"] == 251
    assert run({"find": "a"}, txnNumber=Int64(1), autocommit=True)["code"] == 72
    assert run({"find": "a"}, txnNumber=Int64(1), autocommit=False, startTransaction=False)["code"] == 72
    assert run({"count": "a"}, txnNumber=Int64(1), autocommit=False, startTransaction=True)["code"] == 263
    assert run({"find": "a"}, txnNumber=Int64(1))["code"] == 50768
    assert client.run({"find": "a", "txnNumber": Int64(1), "autocommit": False})["code"] == 72  # no lsid
    assert run({"find": "a"}, txnNumber=Int64(2), autocommit=False, startTransaction=True)["ok"] == 1.0
    assert run({"find": "a"}, txnNumber=Int64(2), autocommit=False, startTransaction=True)["code"] == 117
    assert run({"find": "a"}, txnNumber=Int64(2), autocommit=False,
               readConcern={"level": "snapshot"})["code"] == 72
    assert run({"insert": "a", "documents": [{}]}, txnNumber=Int64(2), autocommit=False,
               writeConcern={"w": 1})["code"] == 72
    assert run({"find": "a"}, txnNumber=Int64(1), autocommit=False, startTransaction=True)["code"] == 225
    commit = {"commitTransaction": 1, "$db": "admin"}
    assert run(commit, txnNumber=Int64(2), autocommit=False)["ok"] == 1.0
    assert run(commit, txnNumber=Int64(2), autocommit=False)["ok"] == 1.0  # a retried commit
    abort = {"abortTransaction": 1, "$db": "admin"}
    assert run(abort, txnNumber=Int64(2), autocommit=False)["code"] == 256
    assert run({"find": "a"}, txnNumber=Int64(2), autocommit=False)["code"] == 256


def test_capped_and_system_writes_are_refused_in_transactions(client):
    client.ok({"create": "capped", "capped": True, "size": 4096})
    t = Txn(client)
    assert t.run({"insert": "capped", "documents": [{}]})["code"] == 263
    t2 = Txn(client)
    assert t2.run({"create": "c2", "capped": True, "size": 4096})["code"] == 263


def test_a_write_error_aborts_the_transaction(client):
    t = Txn(client)
    reply = t.run({"insert": "a", "documents": [{"_id": 1}]})  # duplicate
    assert reply["writeErrors"][0]["code"] == 11000
    assert t.commit()["code"] == 251


def test_transactions_past_their_lifetime_are_aborted(client, monkeypatch):
    monkeypatch.setattr(SETTINGS, "transaction_lifetime_limit_seconds", 0.0)
    t = Txn(client)
    t.ok({"update": "a", "updates": [{"q": {"_id": 1}, "u": {"$set": {"v": 3}}}]})
    client.engine.sessions.reap()
    reply = t.commit()
    assert reply["code"] == 251 and "transactionLifetimeLimitSeconds" in reply["errmsg"]
    # its keys were released: an ordinary write proceeds at once
    client.ok({"update": "a", "updates": [{"q": {"_id": 1}, "u": {"$set": {"v": 4}}}]})


def test_create_and_create_indexes_inside_a_transaction(client):
    t = Txn(client)
    t.ok({"create": "fresh"})
    t.ok({"createIndexes": "fresh", "indexes": [{"key": {"k": 1}, "name": "k_1", "unique": True}]})
    t.ok({"insert": "fresh", "documents": [{"_id": 1, "k": 1}]})
    assert t.run({"insert": "fresh", "documents": [{"_id": 2, "k": 1}]})["writeErrors"][0]["code"] == 11000
    t3 = Txn(client)
    t3.ok({"create": "fresh2"})
    t3.ok({"insert": "fresh2", "documents": [{"_id": 1, "k": 1}]})
    assert t3.commit()["ok"] == 1.0
    assert client.docs("fresh2") == [{"_id": 1, "k": 1}]
    assert t3.run({"createIndexes": "a", "indexes": [{"key": {"z": 1}, "name": "z"}]})["code"] in (251, 256)


# -- retryable writes -----------------------------------------------------------------------------
def test_a_retried_write_applies_once(client):
    s = lsid()
    inc = {"update": "a", "updates": [{"q": {"_id": 1}, "u": {"$inc": {"v": 1}}}], "lsid": s, "txnNumber": Int64(1)}
    first = client.ok(inc)
    assert client.ok(inc) == first
    assert client.docs("a", {"_id": 1}) == [{"_id": 1, "v": 1}]
    fam = {"findAndModify": "a", "query": {"_id": 2}, "update": {"$inc": {"v": 1}}, "new": True, "lsid": s,
           "txnNumber": Int64(2)}
    assert client.ok(fam)["value"] == {"_id": 2, "v": 1}
    assert client.ok(fam)["value"] == {"_id": 2, "v": 1}
    assert client.docs("a", {"_id": 2}) == [{"_id": 2, "v": 1}]
    assert client.run({**inc, "txnNumber": Int64(1)})["code"] == 225
    ins = {"insert": "a", "documents": [{"_id": 3}], "lsid": s, "txnNumber": Int64(3)}
    assert client.ok(ins)["n"] == 1 and client.ok(ins)["n"] == 1
    assert client.ok({"count": "a"})["n"] == 3


def test_retryable_write_results_survive_a_restart(tmp_path):
    from ginkgodb.engine import Engine
    path = str(tmp_path / "data")
    s = lsid()
    inc = {"update": "a", "updates": [{"q": {"_id": 1}, "u": {"$inc": {"v": 1}}, "upsert": True}], "lsid": s,
           "txnNumber": Int64(7)}
    engine = Engine.open(path)
    Client(engine).ok(inc)
    engine.close()
    engine = Engine.open(path)
    c = Client(engine)
    c.ok(inc)
    assert c.docs("a") == [{"_id": 1, "v": 1}]
    engine.close()
