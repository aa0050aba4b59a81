"""zstd collections of small documents train a dictionary once they hold enough of them: later
records are smaller envelopes naming it, and every record reads back, after a restart too."""
from __future__ import annotations

import bson
import pytest
from bson.int64 import Int64
from support.runner import Runner

from ginkgodb.engine import Engine, layout, record_format, zstd_dictionaries
from ginkgodb.errors import CommandError
from ginkgodb.storage.kv import prefix_end

N = zstd_dictionaries.TRAIN_AT


def _doc(i: int) -> dict:
    return {"_id": i, "sku": f"SKU-{i:09d}", "name": f"item {i % 97}", "status": ["active", "sold"][i % 2],
            "price": i * 1.25, "address": {"city": f"city-{i % 20}", "zip": f"{i % 1000:05d}"},
            "tags": ["red", "green", "blue"][: i % 3 + 1], "note": "cedar onyx amber nectar " * (i % 4)}


def _values(engine, name: str) -> list[bytes]:
    coll = engine.collection("test", name)
    with engine.kv.snapshot() as snap:
        return [v for _, v in snap.scan(coll.record_prefix, prefix_end(coll.record_prefix))]


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "data")


def _fill(run: Runner, name: str, n: int, doc=_doc) -> list[dict]:
    docs = [doc(i) for i in range(n)]
    for start in range(0, n, 250):
        run.insert(name, *docs[start:start + 250])
    return docs


def test_a_dictionary_is_trained_at_the_threshold_and_shrinks_later_records(path):
    engine = Engine.open(path, compression="zstd", reserve_bytes=0)
    run = Runner(engine)
    _fill(run, "c", N - 1)
    assert engine.collection("test", "c").meta.dictionary == 0
    run.insert("c", _doc(N - 1))
    did = engine.collection("test", "c").meta.dictionary
    assert did != 0
    with engine.kv.snapshot() as snap:
        assert snap.get(layout.zstd_dictionary_key(did)) is not None
    run.insert("c", *[_doc(i) for i in range(N, 3 * N)])
    values = _values(engine, "c")
    before, after = values[:N], values[N:]
    assert all(v[0] != 4 for v in before)                 # written before the dictionary: as they were
    assert all(v[0] == 4 and v[3] == 0xFF for v in after)  # codec 4, naming the dictionary
    raw_after = sum(record_format.document_size(v) for v in after)
    assert sum(len(v) for v in after) < 0.5 * raw_after
    assert sum(len(v) for v in before) > 0.6 * sum(record_format.document_size(v) for v in before)
    engine.close()


def test_records_read_back_in_a_fresh_process_and_after_updates(path):
    engine = Engine.open(path, compression="zstd", reserve_bytes=0)
    run = Runner(engine)
    docs = _fill(run, "c", 2 * N)
    run({"update": "c", "updates": [{"q": {"_id": {"$lt": 50}}, "u": {"$set": {"status": "gone"}}, "multi": True}]})
    engine.close()
    record_format._DICTIONARIES.clear()       # as a new process starts: nothing registered
    engine = Engine.open(path, reserve_bytes=0)
    try:
        got = Runner(engine).find("c", {}, sort={"_id": 1})
        expected = [dict(d, status="gone") if d["_id"] < 50 else d for d in docs]
        assert [bson.encode(d) for d in got] == [bson.encode(d) for d in expected]
    finally:
        engine.close()


def test_every_stored_dictionary_loads_whatever_the_catalog_entry_names(path):
    engine = Engine.open(path, compression="zstd", reserve_bytes=0)
    run = Runner(engine)
    docs = _fill(run, "c", 2 * N)
    with engine.write() as batch:     # an entry that no longer names the dictionary its records use
        meta = batch.collection("test", "c").meta
        batch.save_meta(meta.evolve(dictionary=0), "dictionary")
    engine.close()
    record_format._DICTIONARIES.clear()
    engine = Engine.open(path, reserve_bytes=0)
    try:
        assert len(Runner(engine).find("c", {})) == len(docs)
    finally:
        engine.close()


def test_large_documents_and_other_codecs_train_none(path):
    engine = Engine.open(path, compression="zstd", reserve_bytes=0)
    run = Runner(engine)
    run({"create": "snappy", "storageEngine": {"ginkgodb": {"compression": "snappy"}}})
    _fill(run, "snappy", N)
    _fill(run, "big", N, doc=lambda i: {"_id": i, "text": f"lorem ipsum {i} " * 1500})
    assert engine.collection("test", "snappy").meta.dictionary == 0
    assert engine.collection("test", "big").meta.dictionary == 0
    engine.close()


def test_a_transaction_inserting_the_threshold_trains_nothing_and_commits(path):
    engine = Engine.open(path, compression="zstd", reserve_bytes=0)
    run = Runner(engine)
    run.insert("c", _doc(-1))
    lsid = {"id": bson.Binary(b"\x01" * 16, 4)}
    txn = {"lsid": lsid, "txnNumber": Int64(1), "autocommit": False}
    run({"insert": "c", "documents": [_doc(i) for i in range(N)], **txn, "startTransaction": True})
    run({"commitTransaction": 1, "lsid": lsid, "txnNumber": Int64(1), "autocommit": False, "$db": "admin"})
    assert run({"count": "c"})["n"] == N + 1
    assert engine.collection("test", "c").meta.dictionary == 0
    engine.close()


def test_the_dictionary_is_not_logged(path):
    engine = Engine.open(path, compression="zstd", reserve_bytes=0)
    run = Runner(engine)
    _fill(run, "c", N)
    assert engine.collection("test", "c").meta.dictionary != 0
    commands = Runner(engine, db="local").find("oplog.rs", {"op": "c", "ns": "test.$cmd"})
    assert [next(iter(e["o"])) for e in commands] == ["create"]
    engine.close()


def test_a_record_naming_an_unknown_dictionary_is_an_internal_error():
    envelope = b"\x04\xff\xff\xff" + (10).to_bytes(4, "little") + (12345).to_bytes(8, "little") + b"x"
    with pytest.raises(CommandError) as err:
        record_format.document(envelope)
    assert "dictionary" in str(err.value)
