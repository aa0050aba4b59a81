"""Compressed collections: the size target, collStats, the create option, old data directories,
and the readers that go around the plan stages (transactions, change streams, the oplog)."""
from __future__ import annotations

import os

import bson
import pytest
from support.runner import Runner

from ginkgodb.engine import Engine, layout, record_format
from ginkgodb.storage.kv import prefix_end

TEXT = ("lorem ipsum dolor sit amet, consectetur adipiscing elit " * 400)[:20000]


def _stored(engine, name, db="test"):
    coll = engine.collection(db, name)
    with engine.kv.snapshot() as snap:
        return [v for _, v in snap.scan(coll.record_prefix, prefix_end(coll.record_prefix))]


@pytest.fixture
def zstd_engine(tmp_path):
    engine = Engine.open(str(tmp_path / "data"), compression="zstd", reserve_bytes=0)
    yield engine
    engine.close()


@pytest.mark.parametrize("codec", ["zstd", "zlib", "snappy"])
def test_repetitive_20kb_documents_take_under_30_percent_on_disk(tmp_path, codec):
    path = str(tmp_path / "data")
    engine = Engine.open(path, compression=codec, reserve_bytes=0)
    run = Runner(engine)
    docs = [{"_id": i, "text": TEXT, "n": i} for i in range(1000)]
    raw = sum(len(bson.encode(d)) for d in docs)
    for start in range(0, 1000, 100):
        run.insert("big", *docs[start:start + 100])
    stats = run({"collStats": "big"})
    assert stats["size"] == raw and stats["count"] == 1000
    assert stats["storageSize"] <= 0.3 * raw
    engine.close()
    # the whole data file (documents, _id index, the oplog's copies, the catalog) on disk
    assert os.path.getsize(os.path.join(path, "data.mdb")) <= 0.3 * raw
    engine = Engine.open(path, reserve_bytes=0)
    try:
        run = Runner(engine)
        found = [d for start in range(0, 1000, 100)   # replies stop at 16 MB: read in slices
                 for d in run.find("big", {"_id": {"$gte": start, "$lt": start + 100}})]
        assert [bson.encode(d) for d in found] == [bson.encode(d) for d in docs]
    finally:
        engine.close()


def test_coll_stats_size_is_uncompressed_and_storage_size_compressed(zstd_engine):
    run = Runner(zstd_engine)
    run({"create": "plain", "storageEngine": {"ginkgodb": {"compression": "none"}}})
    docs = [{"_id": i, "text": TEXT[:2000]} for i in range(20)]
    run.insert("plain", *docs)
    run.insert("packed", *docs)
    plain, packed = run({"collStats": "plain"}), run({"collStats": "packed"})
    assert plain["size"] == packed["size"] == sum(len(bson.encode(d)) for d in docs)
    assert plain["storageSize"] >= plain["size"]
    assert packed["storageSize"] < packed["size"] // 5
    assert packed["avgObjSize"] == plain["avgObjSize"]
    db = run({"dbStats": 1})
    assert db["dataSize"] >= 2 * plain["size"] and db["storageSize"] < db["dataSize"]


def test_small_documents_that_do_not_shrink_stay_plain(zstd_engine):
    run = Runner(zstd_engine)
    run.insert("c", {"_id": 1, "x": 2}, {"_id": 2, "t": TEXT[:3000]})
    small, large = _stored(zstd_engine, "c")
    assert small == bson.encode({"_id": 1, "x": 2})
    assert record_format.is_compressed(large)


def test_reads_updates_deletes_and_indexes_see_documents(zstd_engine):
    run = Runner(zstd_engine)
    run.insert("c", *({"_id": i, "k": i % 7, "t": TEXT[:1000] + str(i)} for i in range(50)))
    run({"createIndexes": "c", "indexes": [{"key": {"k": 1}, "name": "k_1"}]})
    assert all(record_format.is_compressed(v) for v in _stored(zstd_engine, "c"))
    assert {d["_id"] for d in run.find("c", {"k": 3})} == {i for i in range(50) if i % 7 == 3}
    run({"update": "c", "updates": [{"q": {"k": 3}, "u": {"$set": {"k": 100}}, "multi": True}]})
    assert len(run.find("c", {"k": 100}, hint="k_1")) == 7
    run({"findAndModify": "c", "query": {"_id": 4}, "update": {"$inc": {"k": 1}}})
    assert run.find("c", {"_id": 4})[0]["k"] == 5
    run({"delete": "c", "deletes": [{"q": {"k": 100}, "limit": 0}]})
    assert run({"count": "c"})["n"] == 43
    assert run.find("c", {"_id": 11})[0]["t"] == TEXT[:1000] + "11"
    assert run({"aggregate": "c", "pipeline": [{"$group": {"_id": None, "n": {"$sum": 1}}}],
                "cursor": {}})["cursor"]["firstBatch"][0]["n"] == 43


def test_capped_collections_evict_compressed_records(zstd_engine):
    run = Runner(zstd_engine)
    run({"create": "capped", "capped": True, "size": 100_000, "max": 5})
    run.insert("capped", *({"_id": i, "t": TEXT[:4000]} for i in range(12)))
    assert [d["_id"] for d in run.find("capped")] == list(range(7, 12))


def test_transactions_read_and_commit_compressed_documents(zstd_engine):
    from bson.int64 import Int64
    run = Runner(zstd_engine)
    run.insert("c", {"_id": 0, "t": TEXT[:3000]})
    lsid = {"id": bson.Binary(os.urandom(16), 4)}
    txn = {"lsid": lsid, "txnNumber": Int64(1), "autocommit": False}
    run({"insert": "c", "documents": [{"_id": 1, "t": TEXT[:3000]}], **txn, "startTransaction": True})
    inside = run({"find": "c", "filter": {}, **txn})["cursor"]["firstBatch"]
    assert [d["_id"] for d in inside] == [0, 1] and inside[1]["t"] == TEXT[:3000]
    run({"update": "c", "updates": [{"q": {"_id": 0}, "u": {"$set": {"x": 1}}}], **txn})
    run({"commitTransaction": 1, "lsid": lsid, "txnNumber": Int64(1), "autocommit": False, "$db": "admin"})
    assert [(d["_id"], d.get("x")) for d in run.find("c")] == [(0, 1), (1, None)]
    assert all(record_format.is_compressed(v) for v in _stored(zstd_engine, "c"))


def test_change_streams_and_the_oplog_read_compressed_entries(zstd_engine):
    run = Runner(zstd_engine)
    stream = run({"aggregate": "c", "pipeline": [{"$changeStream": {"fullDocument": "updateLookup"}}],
                  "cursor": {}})
    run.insert("c", {"_id": 1, "t": TEXT[:5000]})
    run({"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$set": {"y": 2}}}]})
    events = run({"getMore": stream["cursor"]["id"], "collection": "c"})["cursor"]["nextBatch"]
    assert [e["operationType"] for e in events] == ["insert", "update"]
    assert events[0]["fullDocument"]["t"] == TEXT[:5000]
    assert events[1]["fullDocument"] == {"_id": 1, "t": TEXT[:5000], "y": 2}
    assert zstd_engine.catalog.get("local", "oplog.rs").compression == "zstd"
    assert any(record_format.is_compressed(v) for v in _stored(zstd_engine, "oplog.rs", db="local"))
    entries = Runner(zstd_engine, db="local").find("oplog.rs", {"ns": "test.c", "op": "i"})
    assert entries[0]["o"]["t"] == TEXT[:5000]


def test_a_data_directory_written_without_compression_reads_back(tmp_path):
    """Old directories hold plain records and catalog entries without `compression`: they open
    under a compressing default, read every document, and take compressed ones beside them."""
    path = str(tmp_path / "data")
    engine = Engine.open(path)   # compression "none": what every data directory so far holds
    run = Runner(engine)
    old = [{"_id": i, "t": TEXT[: 100 * i], "n": i} for i in range(40)]
    run.insert("c", *old)
    run({"createIndexes": "c", "indexes": [{"key": {"n": 1}, "name": "n_1"}]})
    assert not any(record_format.is_compressed(v) for v in _stored(engine, "c"))
    with engine.kv.snapshot() as snap:
        entry = bson.decode(snap.get(layout.catalog_key("test", "c")))
        assert "compression" not in entry   # the catalog entry has the format it always had
        assert layout.unpack_u64(snap.get(layout.META_FORMAT)) == layout.FORMAT_VERSION == 1
    engine.close()
    engine = Engine.open(path, compression="zstd")
    try:
        run = Runner(engine)
        assert engine.catalog.get("test", "c").compression == "none"   # fixed at create
        assert [bson.encode(d) for d in run.find("c", sort={"_id": 1})] == [bson.encode(d) for d in old]
        assert run.find("c", {"n": 39}, hint="n_1")[0]["t"] == TEXT[:3900]
        run.insert("new", *old)
        assert engine.catalog.get("test", "new").compression == "zstd"
        assert [bson.encode(d) for d in run.find("new")] == [bson.encode(d) for d in old]
        assert run({"collStats": "c"})["size"] == run({"collStats": "new"})["size"]
    finally:
        engine.close()


def test_the_in_memory_engine_keeps_documents_plain():
    engine = Engine.open(None, compression="zstd")
    try:
        run = Runner(engine)
        run({"create": "c", "storageEngine": {"ginkgodb": {"compression": "zlib"}}})
        run.insert("c", {"_id": 1, "t": TEXT})
        assert engine.catalog.get("test", "c").compression == "none"
        assert _stored(engine, "c") == [bson.encode({"_id": 1, "t": TEXT})]
        info = run({"listCollections": 1})["cursor"]["firstBatch"][0]
        assert info["options"] == {"storageEngine": {"ginkgodb": {"compression": "zlib"}}}
    finally:
        engine.close()


@pytest.mark.parametrize("spec, code, message", [
    ({"ginkgodb": {"compression": "lz4"}}, 2,
     "Enumeration value 'lz4' for field 'storageEngine.ginkgodb.compression' is not a valid value."),
    ({"ginkgodb": {"compression": 1}}, 14,
     "BSON field 'storageEngine.ginkgodb.compression' is the wrong type 'int', expected type 'string'"),
    ({"ginkgodb": {"level": 3}}, 72,
     "'storageEngine.ginkgodb.level' is not a ginkgodb storage option (the one there is: compression)"),
    ({"ginkgodb": 1}, 2, "'storageEngine.ginkgodb' has to be an embedded document."),
    ({"rocksdb": {}}, 72, "rocksdb is not a registered storage engine for this server"),
    ({"wiredTiger": {"configString": "block_compressor=lz4"}}, 2,
     "unknown compressor 'lz4' in storageEngine.wiredTiger.configString"),
    ({"wiredTiger": {"configString": "leaf_page_max=4KB"}}, 238,
     "WiredTiger configuration 'leaf_page_max' has no ginkgodb counterpart (only block_compressor is understood)"),
    ({"wiredTiger": {"other": 1}}, 72, "'storageEngine.wiredTiger.other' is not a WiredTiger collection option"),
    ({"ginkgodb": {"compression": "zstd"}, "wiredTiger": {"configString": "block_compressor=snappy"}}, 72,
     "storageEngine.ginkgodb.compression and the wiredTiger block_compressor disagree: 'zstd' and 'snappy'"),
    (5, 14, "BSON field 'create.storageEngine' is the wrong type 'int', expected type 'object'"),
])
def test_create_refuses_bad_storage_engine_options(zstd_engine, spec, code, message):
    run = Runner(zstd_engine)
    reply = run.error({"create": "c", "storageEngine": spec})
    assert (reply["code"], reply["errmsg"]) == (code, message)
    assert zstd_engine.catalog.get("test", "c") is None


@pytest.mark.parametrize("spec, codec", [
    ({"ginkgodb": {"compression": "snappy"}}, "snappy"),
    ({"wiredTiger": {"configString": "block_compressor=zlib"}}, "zlib"),
    ({"wiredTiger": {"configString": "block_compressor="}}, "none"),
    ({"wiredTiger": {}}, "zstd"),   # says nothing about compression: the default
    ({}, "zstd"),
])
def test_create_chooses_the_codec(zstd_engine, spec, codec):
    run = Runner(zstd_engine)
    run({"create": "c", "storageEngine": spec})
    assert zstd_engine.catalog.get("test", "c").compression == codec
    run.insert("c", {"_id": 1, "t": TEXT})
    assert run.find("c")[0]["t"] == TEXT
    assert record_format.is_compressed(_stored(zstd_engine, "c")[0]) == (codec != "none")


def test_an_unknown_default_is_refused_before_opening(tmp_path):
    with pytest.raises(Exception, match="Enumeration value 'lz4' for field 'storageCompression'"):
        Engine.open(str(tmp_path / "data"), compression="lz4")
    assert not os.path.exists(tmp_path / "data")
