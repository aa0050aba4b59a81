"""engine/bulk_insert.py: the `_id`-only bulk path gives exactly what the per-document path gives."""
from __future__ import annotations

import bson
import pytest
from bson import ObjectId, Timestamp
from bson.raw_bson import RawBSONDocument
from pymongo.errors import BulkWriteError
from support.insert_batches import insert_batches

from ginkgodb import MongoClient
from ginkgodb.engine import bulk_insert

RAW = bson.CodecOptions(document_class=RawBSONDocument)


def _run(tmp_path, name: str, bulk: bool, ordered: bool, monkeypatch, raw: bool) -> tuple:
    if not bulk:
        monkeypatch.setattr(bulk_insert, "applies", lambda coll: False)
    client = MongoClient(str(tmp_path / name))
    coll = client.db.c
    outcomes = []
    try:
        for batch in insert_batches():
            docs = [RawBSONDocument(bson.encode(d)) if raw else dict(d) for d in batch]
            try:
                outcomes.append(coll.insert_many(docs, ordered=ordered).acknowledged)
            except BulkWriteError as exc:
                outcomes.append([(e["index"], e["code"], e["errmsg"]) for e in exc.details["writeErrors"]]
                                + [exc.details["nInserted"]])
        docs = [{k: v for k, v in bson.decode(d.raw).items() if k != "t"}
                for d in coll.with_options(codec_options=RAW).find().sort("_id", 1)]
        ids = [d["_id"] for d in coll.find({}, {"_id": 1})]
        stamped = coll.find_one({"_id": 4})
        events = [e["o"] for e in client.local.oplog.rs.find({"ns": "db.c", "op": "i"})]
        stats = client.db.command("collStats", "c")
        return (outcomes, docs, len(ids), stamped and stamped["t"] != Timestamp(0, 0), len(events),
                coll.estimated_document_count(), stats["size"])
    finally:
        monkeypatch.undo()
        client.close()


@pytest.mark.parametrize("ordered", [True, False])
@pytest.mark.parametrize("raw", [True, False])
def test_bulk_path_matches_the_per_document_path(tmp_path, monkeypatch, ordered, raw):
    fast = _run(tmp_path, "fast", True, ordered, monkeypatch, raw)
    slow = _run(tmp_path, "slow", False, ordered, monkeypatch, raw)
    # generated _ids differ between the runs: compare the documents without them
    strip = [[{k: v for k, v in d.items() if not isinstance(v, ObjectId) or k != "_id"} for d in r[1]]
             for r in (fast, slow)]
    assert fast[0] == slow[0]
    assert strip[0] == strip[1]
    assert fast[2:] == slow[2:]
    codes = {e[1] for outcome in fast[0] if outcome is not True for e in outcome[:-1]}
    assert 11000 in codes        # the inputs do exercise the duplicate checks


def test_bulk_path_is_taken_only_for_a_plain_id_index(tmp_path):
    client = MongoClient(str(tmp_path / "d"))
    db = client.db
    db.create_collection("plain")
    db.create_collection("capped", capped=True, size=4096)
    db.create_collection("clustered", clusteredIndex={"key": {"_id": 1}, "unique": True})
    db.create_collection("indexed")
    db.indexed.create_index("k")
    catalog = client._engine.catalog
    taken = {name: bulk_insert.applies(catalog.collection("db", name))
             for name in ("plain", "capped", "clustered", "indexed")}
    assert taken == {"plain": True, "capped": False, "clustered": False, "indexed": False}
    client.close()


def test_validator_runs_on_the_bulk_path(tmp_path):
    client = MongoClient(str(tmp_path / "v"))
    db = client.db
    db.create_collection("c", validator={"a": {"$exists": True}})
    with pytest.raises(BulkWriteError) as err:
        db.c.insert_many([{"_id": 1, "a": 1}, {"_id": 2}, {"_id": 3, "a": 2}], ordered=False)
    assert [e["code"] for e in err.value.details["writeErrors"]] == [121]
    assert sorted(d["_id"] for d in db.c.find()) == [1, 3]
    db.c.insert_many([{"_id": 4}], bypass_document_validation=True)
    assert db.c.count_documents({}) == 3
    client.close()


def test_a_too_large_id_key_leaves_nothing_behind(tmp_path):
    client = MongoClient(str(tmp_path / "k"))
    coll = client.db.c
    with pytest.raises(BulkWriteError) as err:
        coll.insert_many([{"_id": 1}, {"_id": "s" * 600}, {"_id": 2}], ordered=False)
    assert [e["code"] for e in err.value.details["writeErrors"]] == [17280]
    assert sorted(d["_id"] for d in coll.find({}, {"_id": 1})) == [1, 2]      # a collection scan
    assert coll.count_documents({}) == 2
    client.close()


def test_bulk_path_in_a_transaction_books_each_document(tmp_path):
    client = MongoClient(str(tmp_path / "t"))
    coll = client.db.c
    coll.insert_one({"_id": 0})
    with client.start_session() as session:
        session.start_transaction()
        coll.insert_many([{"_id": i} for i in range(1, 50)], session=session)
        assert coll.count_documents({}, session=session) == 50
        assert coll.count_documents({}) == 1          # not visible outside before commit
        session.commit_transaction()
    assert coll.count_documents({}) == 50
    assert coll.estimated_document_count() == 50
    entries = list(client.local.oplog.rs.find({"o.applyOps": {"$exists": True}}))
    assert [len(e["o"]["applyOps"]) for e in entries] == [49]
    client.close()
