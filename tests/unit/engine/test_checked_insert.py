"""bsonutil.checked: documents checked ahead (a restore's or an import's worker process) are
stored by the bulk path without a second decode, with exactly the results of plain raw ones."""
from __future__ import annotations

import bson
import pytest
from bson import Int64, ObjectId, Timestamp
from bson.raw_bson import RawBSONDocument
from pymongo.errors import BulkWriteError
from support.insert_batches import insert_batches

from ginkgodb import MongoClient
from ginkgodb.bsonutil.checked import OID_KEY_PREFIX, CheckedRaw, check_documents, check_one, checked
from ginkgodb.engine import bulk_insert

RAW = bson.CodecOptions(document_class=RawBSONDocument)


def test_check_one_vouches_only_for_the_plain_case():
    assert check_one(bson.encode({"_id": 1, "a": "x"})) == bulk_insert.encode_key((1,))
    oid = ObjectId()
    assert check_one(bson.encode({"_id": oid})) == OID_KEY_PREFIX + oid.binary
    id_last = b"".join([b"\x10a\x00\x01\x00\x00\x00", b"\x10_id\x00\x02\x00\x00\x00"])
    refused = [
        bson.encode({"_id": 1})[:-1] + b"\x01",              # no trailing NUL
        bson.encode({"_id": 1, "s": "abc"}).replace(b"\x04\x00\x00\x00abc", b"\x09\x00\x00\x00abc"),
        (len(id_last) + 5).to_bytes(4, "little") + id_last + b"\x00",   # `_id` not first
        bson.encode({"_id": 1, "t": Timestamp(0, 0)}),        # a Timestamp to fill in
        bson.encode({"_id": [1]}), bson.encode({"_id": {"k": 1}}), bson.encode({"_id": Int64(1)}),
        bson.encode({"_id": True}), bson.encode({}),
    ]
    deep: dict = {"leaf": "x" * 800}
    for _ in range(60):
        deep = {"d": deep}
    refused.append(bson.encode({"_id": 2, "deep": deep}))   # large and deep: the engine's call
    assert check_documents(refused) == [None] * len(refused)
    wide = bson.encode({"_id": 3, "w": "w" * 5000, "nested": {"a": [{"b": 1}]}})
    assert check_one(wide) is not None                      # large but shallow
    docs = checked([wide, refused[3]], check_documents([wide, refused[3]]))
    assert type(docs[0]) is CheckedRaw and type(docs[1]) is RawBSONDocument


def _outcomes(tmp_path, name, make, ordered):
    client = MongoClient(str(tmp_path / name))
    coll = client.db.c
    out = []
    try:
        for batch in insert_batches():
            raws = [bson.encode(d) for d in batch]
            try:
                coll.insert_many(make(raws), ordered=ordered)
                out.append(True)
            except BulkWriteError as exc:
                out.append([(e["index"], e["code"], e["errmsg"]) for e in exc.details["writeErrors"]]
                           + [exc.details["nInserted"]])
        # a generated _id and a filled-in Timestamp differ between two runs: left out
        keep = {"x": {"$exists": False}, "t": {"$exists": False}}
        docs = [d.raw for d in coll.with_options(codec_options=RAW).find(keep).sort("_id", 1)]
        oplog = [e["o"] for e in client.local.oplog.rs.find({"ns": "db.c", "op": "i"})
                 if "t" not in e["o"] and "x" not in e["o"]]
        stats = client.db.command("collStats", "c")
        return out, docs, oplog, coll.count_documents({}), stats["count"], stats["size"]
    finally:
        client.close()


@pytest.mark.parametrize("ordered", [True, False])
def test_checked_documents_give_what_plain_raw_ones_give(tmp_path, ordered):
    plain = _outcomes(tmp_path, "plain", lambda raws: [RawBSONDocument(r) for r in raws], ordered)
    ahead = _outcomes(tmp_path, "ahead", lambda raws: checked(raws, check_documents(raws)), ordered)
    assert ahead == plain
    codes = {e[1] for o in plain[0] if o is not True for e in o[:-1]}
    assert 11000 in codes and 17280 in codes      # duplicates and a too-long key exercised


def test_checked_documents_still_meet_the_validator_and_transactions(tmp_path):
    client = MongoClient(str(tmp_path / "v"))
    db = client.db
    db.create_collection("c", validator={"a": {"$exists": True}})
    raws = [bson.encode(d) for d in ({"_id": 1, "a": 1}, {"_id": 2}, {"_id": 3, "a": 2})]
    with pytest.raises(BulkWriteError) as err:
        db.c.insert_many(checked(raws, check_documents(raws)), ordered=False)
    assert [e["code"] for e in err.value.details["writeErrors"]] == [121]
    assert sorted(d["_id"] for d in db.c.find()) == [1, 3]
    raws = [bson.encode({"_id": i}) for i in range(10, 20)]
    with client.start_session() as session:
        session.start_transaction()
        db.t.insert_many(checked(raws, check_documents(raws)), session=session)
        assert db.t.count_documents({}) == 0
        session.commit_transaction()
    assert db.t.count_documents({}) == 10
    entries = list(client.local.oplog.rs.find({"o.applyOps": {"$exists": True}}))
    inserts = [op for e in entries for op in e["o"]["applyOps"] if op["op"] == "i"]
    assert sorted(op["o"]["_id"] for op in inserts) == list(range(10, 20))
    client.close()


def _clean_then_troubled():
    """Batches the whole-batch path takes (every document checked, nothing to report), then
    ones it must leave to the per-document path: keys below the index's greatest entry (a
    lookup each, one of them a duplicate of a stored document) and a duplicate in the batch."""
    oid = ObjectId("65a1b2c3d4e5f60718293a4b")
    yield [{"_id": i, "v": "x" * (i % 7)} for i in range(100, 140)]
    yield [{"_id": oid, "o": 1}, {"_id": "str", "s": 1}]         # beyond every number
    yield [{"_id": 2.5, "f": 1}] + [{"_id": i} for i in range(1, 40)]   # below: looked up, new
    yield [{"_id": 50}, {"_id": 120, "dup": "stored"}, {"_id": 51}]
    yield [{"_id": 200}, {"_id": 201}, {"_id": 200, "dup": "in batch"}]


def _all_outcomes(tmp_path, name, make, ordered):
    client = MongoClient(str(tmp_path / name))
    coll = client.db.c
    out = []
    try:
        with coll.watch(max_await_time_ms=50) as stream:
            for batch in _clean_then_troubled():
                raws = [bson.encode(d) for d in batch]
                try:
                    coll.insert_many(make(raws), ordered=ordered)
                    out.append(True)
                except BulkWriteError as exc:
                    out.append([(e["index"], e["code"], e["errmsg"])
                                for e in exc.details["writeErrors"]] + [exc.details["nInserted"]])
            events = []
            while True:
                event = stream.try_next()
                if event is None:
                    break
                events.append((event["operationType"], event["documentKey"], event["fullDocument"]))
        docs = [d.raw for d in coll.with_options(codec_options=RAW).find().sort("_id", 1)]
        oplog = [(e["o"], e["ui"]) for e in client.local.oplog.rs.find({"ns": "db.c", "op": "i"})]
        uuid = client.db.command("listCollections")["cursor"]["firstBatch"][0]["info"]["uuid"]
        stats = client.db.command("collStats", "c")
        found = [d["_id"] for d in coll.find({"_id": {"$gte": 100, "$lt": 140}}).sort("_id", -1)]
        return (out, docs, [o for o, _ in oplog], {ui == uuid for _, ui in oplog}, events,
                stats["count"], stats["size"], found)
    finally:
        client.close()


@pytest.mark.parametrize("ordered", [True, False])
def test_whole_checked_batches_give_what_plain_raw_ones_give(tmp_path, monkeypatch, ordered):
    taken = []
    whole = bulk_insert._all_checked

    def counting(*args):
        taken.append(whole(*args))
        return taken[-1]

    monkeypatch.setattr(bulk_insert, "_all_checked", counting)
    plain = _all_outcomes(tmp_path, "plain", lambda raws: [RawBSONDocument(r) for r in raws], ordered)
    assert not any(taken)                         # plain documents never take it
    taken.clear()
    ahead = _all_outcomes(tmp_path, "ahead", lambda raws: checked(raws, check_documents(raws)), ordered)
    assert ahead == plain
    assert taken == [True, True, False, False, False]
    assert plain[4] and len(plain[4]) == plain[5]     # every stored insert seen by the stream
    assert plain[7] == list(range(139, 99, -1))       # found through the `_id` index


def test_checked_raw_is_a_raw_document():
    raw = bson.encode({"_id": 1, "a": [1, {"b": 2}]})
    doc = CheckedRaw(raw, b"key")
    assert doc.raw is raw and doc.id_key == b"key" and list(doc) == ["_id", "a"]
    assert doc == RawBSONDocument(raw) and doc["a"][1]["b"] == 2 and bson.encode(doc) == raw
    from ginkgodb.bsonutil.checked import id_key_of, raw_of
    assert raw_of(doc) is raw and id_key_of(doc) == b"key"
