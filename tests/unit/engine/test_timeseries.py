"""Time-series buckets in the engine: routing after a restart and inside transactions, closing
by size, the TTL pass over whole buckets, reads through the unpack stage."""
from __future__ import annotations

import datetime
import uuid

import bson
from bson.binary import Binary
from bson.int64 import Int64
from support.engines import make_kv
from support.runner import Runner

from ginkgodb.commands import CommandContext, dispatch
from ginkgodb.engine import Engine
from ginkgodb.engine.ttl import expire_once

T0 = datetime.datetime(2024, 5, 1)


def at(minutes: float) -> datetime.datetime:
    return T0 + datetime.timedelta(minutes=minutes)


class Client:
    def __init__(self, engine):
        self.engine = engine

    def run(self, cmd, db="db"):
        return bson.decode(bson.encode(dispatch(CommandContext(engine=self.engine), {**cmd, "$db": db})))

    def ok(self, cmd, db="db"):
        reply = self.run(cmd, db)
        assert reply["ok"] == 1.0 and "writeErrors" not in reply, reply
        return reply


class Txn:
    """One transaction's statements (the first starts it)."""

    def __init__(self, client, number=1):
        self.client, self.lsid, self.number, self.started = client, {"id": Binary(uuid.uuid4().bytes, 4)}, number, False

    def run(self, cmd, db="db"):
        fields = {"lsid": self.lsid, "txnNumber": Int64(self.number), "autocommit": False}
        if not self.started:
            fields["startTransaction"] = self.started = True
        return self.client.run({**cmd, **fields}, db)

    def ok(self, cmd):
        reply = self.run(cmd)
        assert reply["ok"] == 1.0, reply
        return reply

    def abort(self):
        return self.client.run({"abortTransaction": 1, "lsid": self.lsid, "txnNumber": Int64(self.number),
                                "autocommit": False}, "admin")


def _bucket_sizes(run: Runner, name: str = "w") -> list[int]:
    return sorted(len(b["data"]["t"]) for b in run.find(f"system.buckets.{name}"))


def test_inserts_after_a_restart_go_to_the_stored_open_bucket(tmp_path):
    engine = Engine(make_kv("lmdb", tmp_path))
    run = Runner(engine)
    run({"create": "w", "timeseries": {"timeField": "t", "metaField": "m"}})
    run.insert("w", *({"t": at(i), "m": "s1"} for i in range(10)))
    engine.close()
    engine = Engine(make_kv("lmdb", tmp_path))
    try:
        run = Runner(engine)
        run.insert("w", *({"t": at(10 + i), "m": "s1"} for i in range(5)))
        run.insert("w", {"t": at(3.5), "m": "s1"})          # out of order, still inside the bucket's hour
        assert _bucket_sizes(run) == [16]
        stats = run({"collStats": "w"})["timeseries"]
        assert (stats["numBucketUpdates"], stats["numBucketsReopened"]) == (2, 1)  # a new process reopens it
        assert [d["t"] for d in run.find("w", {"t": {"$gte": at(13)}})] == [at(13), at(14)]
    finally:
        engine.close()


def test_a_transaction_reads_buckets_but_may_not_write_them(engine):
    client = Client(engine)
    client.ok({"create": "w", "timeseries": {"timeField": "t", "metaField": "m"}})
    client.ok({"insert": "w", "documents": [{"t": at(0), "m": 1}]})
    t = Txn(client)
    assert len(t.ok({"find": "w", "filter": {"m": 1}})["cursor"]["firstBatch"]) == 1
    t.abort()
    for number, (cmd, what) in enumerate( (({"insert": "w", "documents": [{"t": at(1), "m": 1}]}, "insert into"),
                      ({"delete": "w", "deletes": [{"q": {}, "limit": 0}]}, "delete from"),
                      ({"update": "w", "updates": [{"q": {}, "u": {"$set": {"m": 2}}, "multi": True}]}, "update")), start=2):
        t = Txn(client, number)   # the error ends the transaction, as in mongod
        reply = t.run(cmd)
        assert (reply["code"], reply["errmsg"]) == (
            263, f"Cannot {what} a time-series collection in a multi-document transaction: db.w")
    assert client.ok({"count": "w"})["n"] == 1


def test_an_ordered_insert_keeps_what_came_before_its_first_error(engine):
    run = Runner(engine)
    run({"create": "w", "timeseries": {"timeField": "t", "metaField": "m"}})
    reply = run({"insert": "w", "documents": [{"t": at(0), "m": 1}, {"t": at(1), "m": 1}, {"t": None}, {"t": at(2)}]})
    assert reply["n"] == 2 and reply["writeErrors"][0]["index"] == 2
    assert _bucket_sizes(run) == [2]


def test_a_bucket_closes_when_it_would_pass_125_kib(engine):
    run = Runner(engine)
    run({"create": "w", "timeseries": {"timeField": "t", "metaField": "m"}})
    run.insert("w", *({"t": at(i / 10), "m": 0, "blob": "x" * 10_000} for i in range(30)))
    assert _bucket_sizes(run) == [6, 12, 12]
    assert run({"collStats": "w"})["timeseries"]["numBucketsClosedDueToSize"] == 2


def test_the_ttl_pass_deletes_whole_buckets_older_than_expire_after_seconds(engine):
    run = Runner(engine)
    run({"create": "w", "timeseries": {"timeField": "t", "metaField": "m"}, "expireAfterSeconds": 3600})
    run.insert("w", *({"t": at(i * 30), "m": 0} for i in range(8)))   # 4 hour-buckets of 2
    # an hour after 2:30: the buckets of hours 0 and 1 (newest 0:30 and 1:30) have expired
    now = at(210)
    assert expire_once(engine, now) == 2
    assert sorted(d["t"] for d in run.find("w")) == [at(i * 30) for i in range(4, 8)]


def test_no_meta_field_buckets_group_by_time_alone(engine):
    run = Runner(engine)
    run({"create": "w", "timeseries": {"timeField": "t", "granularity": "minutes"}})
    run.insert("w", *({"t": at(i * 10), "v": i} for i in range(300)))   # 50 hours, day-long buckets
    assert _bucket_sizes(run) == [12, 144, 144]
    assert "meta" not in run.find("system.buckets.w")[0]
    assert run({"count": "w", "query": {"t": {"$lt": at(100)}}})["n"] == 10
    reply = run({"aggregate": "w", "pipeline": [{"$group": {"_id": None, "s": {"$sum": "$v"}}}], "cursor": {}})
    assert reply["cursor"]["firstBatch"] == [{"_id": None, "s": sum(range(300))}]
    assert run({"distinct": "w", "key": "v", "query": {"v": {"$lt": 3}}})["values"] == [0, 1, 2]
