"""The oplog: entry format version 1 (docs/design/oplog.md), written with the data, truncated."""
from __future__ import annotations

import bson
import pytest
from bson.int64 import Int64
from bson.objectid import ObjectId
from bson.timestamp import Timestamp
from support.engines import make_kv
from support.runner import Runner

from ginkgodb.engine import Engine
from ginkgodb.engine.batch import Delete, Insert, WriteBatch
from ginkgodb.engine.oplog_entries import EntryBuilder, doc


def entries(engine, **filt) -> list[dict]:
    docs = Runner(engine, db="local").find("oplog.rs", filt)
    return docs


def last(engine) -> dict:
    return entries(engine)[-1]


def test_the_oplog_exists_as_mongod_shows_it(engine):
    run = Runner(engine, db="local")
    info = run({"listCollections": 1, "filter": {"name": "oplog.rs"}})["cursor"]["firstBatch"][0]
    assert info["options"]["capped"] is True and info["options"]["autoIndexId"] is False
    assert info["options"]["size"] == engine.oplog.max_bytes
    assert run({"listIndexes": "oplog.rs"})["cursor"]["firstBatch"] == []   # no _id index


def test_insert_update_replace_delete_entries(engine):
    run = Runner(engine)
    run.insert("c", {"_id": 1, "a": 1, "arr": [1, 2, 3]})
    uuid = engine.catalog.get("test", "c").uuid
    ins = last(engine)
    assert list(ins) == ["op", "ns", "ui", "o", "o2", "ts", "t", "v", "wall"]
    assert ins["op"] == "i" and ins["ns"] == "test.c" and ins["ui"] == uuid
    assert ins["o"] == {"_id": 1, "a": 1, "arr": [1, 2, 3]} and ins["o2"] == {"_id": 1}
    assert ins["v"] == 2 and isinstance(ins["v"], int) and ins["t"] == -1
    create = entries(engine)[-2]
    assert create["op"] == "c" and create["ns"] == "test.$cmd"
    assert create["o"] == {"create": "c", "idIndex": {"v": 2, "key": {"_id": 1}, "name": "_id_"}}

    run({"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$set": {"a": 2, "b.c": 1}, "$push": {"arr": 4}}}]})
    upd = last(engine)
    assert upd["op"] == "u" and upd["o2"] == {"_id": 1}
    assert upd["o"] == {"$v": 2, "diff": {"u": {"a": 2}, "i": {"b": {"c": 1}}, "sarr": {"a": True, "u3": 4}}}

    run({"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$pop": {"arr": 1}, "$unset": {"b": 1}}}]})
    assert last(engine)["o"] == {"$v": 2, "diff": {"d": {"b": False}, "sarr": {"a": True, "l": 3}}}

    run({"update": "c", "updates": [{"q": {"_id": 1}, "u": {"x": 1}}]})
    assert last(engine)["o"] == {"_id": 1, "x": 1}          # a replacement: the whole document

    run({"delete": "c", "deletes": [{"q": {"_id": 1}, "limit": 1}]})
    dele = last(engine)
    assert dele["op"] == "d" and dele["o"] == {"_id": 1} and "o2" not in dele


def test_a_pipeline_update_is_a_diff_unless_the_document_is_smaller(engine):
    run = Runner(engine)
    run.insert("c", {"_id": 1, "a": 1, "array": ["foo", {"a": "bar"}, 1, 2, 3], "pad": "x" * 50})
    run({"update": "c", "updates": [{"q": {"_id": 1}, "u": [{"$set": {"array": ["foo", {"a": "bar"}]}}]}]})
    assert last(engine)["o"] == {"$v": 2, "diff": {"sarray": {"a": True, "l": 2}}}
    run.insert("t", {"_id": 1})
    run({"update": "t", "updates": [{"q": {"_id": 1}, "u": [{"$set": {"y": 2}}]}]})
    assert last(engine)["o"] == {"_id": 1, "y": 2}           # mongod logs it whole, too


@pytest.mark.parametrize("u", [{"$set": {"a.b": 2}, "$push": {"arr": 4}}, [{"$set": {"arr": [1]}}],
                               [{"$set": {"x": 1}}]])
def test_a_multi_update_past_the_kept_images_logs_the_same_entries(engine, monkeypatch, u):
    """Past `images_kept` an update's diff is made when it is written and its images dropped (so
    a large multi-update's memory stays near its BSON); the entries must not change."""
    run = Runner(engine)
    docs = [{"_id": i, "a": {"b": i}, "arr": [i, 2, 3], "pad": "p" * (i % 3)} for i in range(6)]
    run.insert("kept", *docs)
    run.insert("made", *docs)
    run({"update": "kept", "updates": [{"q": {}, "u": u, "multi": True}]})
    monkeypatch.setattr(WriteBatch, "images_kept", 2)
    run({"update": "made", "updates": [{"q": {}, "u": u, "multi": True}]})
    logged = {ns: [(e["o"], e["o2"]) for e in entries(engine, op="u", ns=ns)] for ns in ("test.kept", "test.made")}
    assert len(logged["test.made"]) == 6 and logged["test.made"] == logged["test.kept"]


def test_every_entry_has_its_own_increasing_timestamp(engine):
    run = Runner(engine)
    run.insert("c", *[{"_id": i} for i in range(5)])
    stamps = [e["ts"] for e in entries(engine)]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
    assert engine.oplog.last_ts == stamps[-1] and engine.oplog.first_ts == stamps[0]


def test_reply_operation_time_is_the_batch_last_entry(engine):
    with engine.write() as batch:
        from ginkgodb.engine.ddl import ensure_collection
        from ginkgodb.engine.records import insert_record
        coll = ensure_collection(batch, "test", "c")
        for i in range(3):
            doc = {"_id": i}
            insert_record(batch, batch.collection("test", "c"), doc, bson.encode(doc))
        assert isinstance(batch, WriteBatch)
    assert batch.commit_ts == engine.oplog.last_ts and coll is not None


def test_ddl_entries(engine):
    run = Runner(engine)
    admin = Runner(engine, db="admin")
    run({"create": "c", "capped": True, "size": 4096})
    assert last(engine)["o"] == {"create": "c", "capped": True, "size": 4096,
                                 "idIndex": {"v": 2, "key": {"_id": 1}, "name": "_id_"}}
    run({"createIndexes": "c", "indexes": [{"key": {"x": 1}, "name": "x_1"}, {"key": {"y": 1}, "name": "y_1"}]})
    assert [e["o"] for e in entries(engine)[-2:]] == [
        {"createIndexes": "c", "v": 2, "key": {"x": 1}, "name": "x_1"},
        {"createIndexes": "c", "v": 2, "key": {"y": 1}, "name": "y_1"}]
    run({"dropIndexes": "c", "index": "x_1"})
    drop_ix = last(engine)
    assert drop_ix["o"] == {"dropIndexes": "c", "index": "x_1"}
    assert drop_ix["o2"] == {"v": 2, "key": {"x": 1}, "name": "x_1"}
    run({"collMod": "c", "index": {"name": "y_1", "hidden": True}})
    mod = last(engine)
    uuid = engine.catalog.get("test", "c").uuid
    assert mod["o"] == {"collMod": "c", "index": {"name": "y_1", "hidden": True}}
    assert mod["o2"] == {"collectionOptions_old": {"uuid": uuid, "capped": True, "size": 4096},
                         "indexOptions_old": {"hidden": False}}
    run.insert("d", {})
    target = engine.catalog.get("test", "d").uuid
    admin({"renameCollection": "test.c", "to": "test.d", "dropTarget": True})
    ren = last(engine)
    assert ren["ns"] == "test.$cmd" and ren["ui"] == uuid
    assert ren["o"] == {"renameCollection": "test.c", "to": "test.d", "stayTemp": False, "dropTarget": target}
    assert not any(e["o"].get("drop") == "d" for e in entries(engine))  # the target's drop is in the rename
    run({"drop": "d"})
    assert last(engine)["o"] == {"drop": "d"} and last(engine)["o2"] == {"numRecords": Int64(0)}
    run.insert("e", {}, {})
    run({"dropDatabase": 1})
    tail = entries(engine)[-2:]
    assert tail[0]["o"] == {"drop": "e"} and tail[0]["o2"] == {"numRecords": 2}
    assert tail[1]["o"] == {"dropDatabase": 1} and tail[1]["ns"] == "test.$cmd" and "ui" not in tail[1]


def test_views_are_logged_without_a_uuid(engine):
    run = Runner(engine)
    run({"create": "v", "viewOn": "c", "pipeline": [{"$match": {"a": 1}}]})
    assert last(engine)["o"] == {"create": "v", "viewOn": "c", "pipeline": [{"$match": {"a": 1}}]}
    assert "ui" not in last(engine)
    run({"drop": "v"})
    assert last(engine)["o2"] == {"numRecords": 0, "viewOn": "c"}


def test_unlogged_namespaces_and_multikey(engine):
    Runner(engine, db="local").insert("mine", {"_id": 1})
    run = Runner(engine)
    run({"createIndexes": "c", "indexes": [{"key": {"tags": 1}, "name": "tags_1"}]})
    before = len(entries(engine))
    run.insert("c", {"tags": [1, 2]})           # the index becomes multikey: no entry for that
    after = entries(engine)
    assert len(after) == before + 1 and after[-1]["op"] == "i"
    assert not any(e["ns"].startswith("local.") for e in after)


def test_capped_evictions_are_logged_deletes(engine):
    run = Runner(engine)
    run({"create": "cap", "capped": True, "size": 4096, "max": 2})
    run.insert("cap", {"_id": 1}, {"_id": 2}, {"_id": 3})
    ops = [(e["op"], e["o"].get("_id")) for e in entries(engine) if e["ns"] == "test.cap"]
    assert ops == [("i", 1), ("i", 2), ("i", 3), ("d", 1)]


def test_retryable_write_entries(engine):
    lsid = {"id": bson.Binary(b"\x01" * 16, 4)}
    with engine.write() as batch:
        from ginkgodb.engine.ddl import ensure_collection
        from ginkgodb.engine.records import insert_record
        ensure_collection(batch, "test", "c")
        for i in range(2):
            insert_record(batch, batch.collection("test", "c"), {"_id": i}, bson.encode({"_id": i}))
        batch.txn_info = {"lsid": lsid, "txnNumber": Int64(7), "stmtIds": [0, 1]}
    es = entries(engine)[-3:]
    assert "lsid" not in es[0] and es[0]["op"] == "c"          # the implicit create
    first, second = es[1], es[2]
    assert list(first)[:2] == ["lsid", "txnNumber"] and first["lsid"] == lsid and first["txnNumber"] == 7
    assert (first["stmtId"], second["stmtId"]) == (0, 1)
    assert first["prevOpTime"] == {"ts": Timestamp(0, 0), "t": -1}
    assert second["prevOpTime"] == {"ts": first["ts"], "t": -1}


def test_a_transaction_is_one_apply_ops_entry(engine):
    Runner(engine).insert("c", {"_id": 0, "n": 0})
    lsid = {"id": bson.Binary(b"\x02" * 16, 4)}
    with engine.write() as batch:
        from ginkgodb.engine.records import insert_record, update_record
        coll = batch.collection("test", "c")
        insert_record(batch, coll, {"_id": 1}, bson.encode({"_id": 1}))
        old = {"_id": 0, "n": 0}
        update_record(batch, coll, 1, old, bson.encode(old), {"_id": 0, "n": 1})
        batch.txn_info = {"lsid": lsid, "txnNumber": Int64(3), "autocommit": False}
    entry = last(engine)
    assert entry["op"] == "c" and entry["ns"] == "admin.$cmd" and entry["lsid"] == lsid
    assert entry["txnNumber"] == 3 and entry["prevOpTime"] == {"ts": Timestamp(0, 0), "t": -1}
    uuid = engine.catalog.get("test", "c").uuid
    assert entry["o"] == {"applyOps": [
        {"op": "i", "ns": "test.c", "ui": uuid, "o": {"_id": 1}, "o2": {"_id": 1}},
        {"op": "u", "ns": "test.c", "ui": uuid, "o": {"$v": 2, "diff": {"u": {"n": 1}}}, "o2": {"_id": 0}}]}


def test_truncation_keeps_the_size_and_the_newest(tmp_path):
    engine = Engine(make_kv("memory", tmp_path), oplog_bytes=4096)
    try:
        run = Runner(engine)
        for i in range(100):
            run.insert("c", {"_id": i, "pad": "x" * 100})
        assert engine.oplog.used_bytes <= 4096
        kept = entries(engine)
        assert kept[-1]["o"]["_id"] == 99 and len(kept) == engine.oplog.count < 100
        assert engine.oplog.first_ts == kept[0]["ts"]
    finally:
        engine.close()


@pytest.mark.parametrize("kind", ["lmdb"])
def test_the_clock_continues_after_the_newest_entry(tmp_path, kind):
    engine = Engine(make_kv(kind, tmp_path))
    Runner(engine).insert("c", {})
    newest = engine.oplog.last_ts
    engine.close()
    engine = Engine(make_kv(kind, tmp_path))
    try:
        assert engine.clock.now() >= newest
        Runner(engine).insert("c", {})
        assert engine.oplog.last_ts > newest
    finally:
        engine.close()


def test_the_oplog_can_be_turned_off(tmp_path):
    engine = Engine(make_kv("memory", tmp_path), oplog=False)
    try:
        Runner(engine).insert("c", {})
        assert engine.catalog.get("local", "oplog.rs") is None and engine.oplog.last_ts is None
    finally:
        engine.close()


def test_noop_entries(engine):
    ts = engine.oplog.append_noop({"msg": "initiating set"})
    entry = last(engine)
    assert entry["op"] == "n" and entry["ns"] == "" and entry["o"] == {"msg": "initiating set"}
    assert entry["ts"] == ts


def test_only_the_server_writes_the_oplog(engine):
    local = Runner(engine, db="local")
    reply = local.raw({"insert": "oplog.rs", "documents": [{}]})
    assert reply["ok"] == 0 and reply["code"] == 20
    assert local.error({"delete": "oplog.rs", "deletes": [{"q": {}, "limit": 0}]})["code"] == 20
    assert local.error({"drop": "oplog.rs"})["errmsg"] == "can't drop live oplog while replicating"
    assert local.error({"dropDatabase": 1})["errmsg"] == "Cannot drop 'local' database while replication is active"
    admin = Runner(engine, db="admin")
    assert admin.error({"renameCollection": "local.oplog.rs", "to": "local.x"})["code"] == 20
    assert engine.catalog.get("local", "oplog.rs") is not None


@pytest.mark.parametrize("uuid", [None, bson.Binary(bytes(range(16)), 4)])
def test_a_batch_of_inserts_gets_the_entry_bodies_one_insert_at_a_time_gets(uuid):
    ids = [ObjectId(), 7, "seven", 7.5, {"a": 1}, [1, 2], ObjectId()]
    ops = [Insert("db.c", uuid, i, bson.encode({"_id": v, "x": i})) for i, v in enumerate(ids)]
    one_by_one = [EntryBuilder().insert(op) for op in ops]
    assert EntryBuilder().inserts(ops) == one_by_one
    assert all(bson.decode(doc(b))["o2"] == {"_id": v} for b, v in zip(one_by_one, ids))


@pytest.mark.parametrize("uuid", [None, bson.Binary(bytes(range(16)), 4)])
def test_a_batch_of_deletes_gets_the_entry_bodies_the_general_encoding_gives(uuid):
    ids = [ObjectId(), 7, "seven", 7.5, {"a": 1}, ObjectId(), bson.Binary(b"xy", 5)]
    ops = [Delete("db.c", uuid, i, bson.encode({"_id": v, "x": i})) for i, v in enumerate(ids)]
    one_by_one = [EntryBuilder().delete(op) for op in ops]
    assert EntryBuilder().deletes(ops) == one_by_one
    general = [b"\x02op\x00\x02\x00\x00\x00d\x00" + EntryBuilder()._ns_ui("db.c", uuid)
               + b"\x03o\x00" + bson.encode({"_id": v}) for v in ids]
    assert one_by_one == general
    assert [bson.decode(doc(b))["o"] for b in one_by_one] == [{"_id": v} for v in ids]


def test_one_insert_per_batch_logs_what_a_batch_of_inserts_logs(tmp_path):
    """The single-insert path (stamped in place) against the general one, entry by entry: the
    same fields, increasing timestamps, the oplog's numbers kept; and after a reopen (the first
    write takes the general path, which continues the clock from the newest entry)."""
    one = Engine(make_kv("lmdb", tmp_path))
    run = Runner(one)
    for i in range(3):
        run.insert("c", {"_id": i, "x": "a" * i})
    run({"insert": "c", "documents": [{"_id": 10}, {"_id": 11}]})
    run.insert("c", {"_id": 12})
    got = [e for e in entries(one) if e["op"] == "i"]
    assert [e["o"]["_id"] for e in got] == [0, 1, 2, 10, 11, 12]
    assert all(list(e) == ["op", "ns", "ui", "o", "o2", "ts", "t", "v", "wall"] for e in got)
    stamps = [e["ts"] for e in entries(one)]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
    status = one.oplog.status()
    assert status["count"] == len(entries(one)) and status["last"] == stamps[-1]
    one.close()
    again = Engine(make_kv("lmdb", tmp_path))
    try:
        Runner(again).insert("c", {"_id": 13})
        Runner(again).insert("c", {"_id": 14})
        after = entries(again)
        assert [e["o"]["_id"] for e in after[-2:]] == [13, 14]
        assert after[-3]["ts"] == stamps[-1] < after[-2]["ts"] < after[-1]["ts"]
        assert again.oplog.count == len(after)
    finally:
        again.close()
