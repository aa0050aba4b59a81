"""A secondary's applier (engine/oplog_apply.py): a primary's oplog applied to another engine
gives the same data, the same collection UUIDs and the same oplog; applying twice is harmless."""
from __future__ import annotations

import bson
import pytest
from support.engines import make_kv
from support.runner import Runner

from ginkgodb.engine import Engine, OplogApplyError


def raw_entries(engine) -> list[bytes]:
    return [bson.encode(d) for d in Runner(engine, db="local").find("oplog.rs", {})]


def dump(engine, coll: str) -> list:
    return Runner(engine).find(coll, {}, sort={"_id": 1})


@pytest.fixture
def pair(engine, tmp_path):
    other = Engine(make_kv("memory", tmp_path / "secondary"))
    yield engine, other
    other.close()


def test_applying_a_history_reproduces_the_data_and_the_oplog(pair):
    primary, secondary = pair
    run = Runner(primary)
    run.insert("c", {"_id": 1, "a": 1, "arr": [1, 2, 3]}, {"_id": 2, "a": 2})
    run({"createIndexes": "c", "indexes": [{"key": {"a": 1}, "name": "a_1", "unique": True}]})
    run({"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$set": {"b.c": 1}, "$push": {"arr": 4}}}]})
    run({"update": "c", "updates": [{"q": {"_id": 2}, "u": {"x": 9, "a": 3}}]})
    run({"delete": "c", "deletes": [{"q": {"_id": 2}, "limit": 1}]})
    run.insert("d", {"_id": "x"})
    run({"drop": "d"})
    entries = raw_entries(primary)
    last = secondary.apply_oplog(entries[:3])
    assert last == bson.decode(entries[2])["ts"]
    secondary.apply_oplog(entries[3:])
    assert dump(secondary, "c") == dump(primary, "c")
    assert secondary.catalog.get("test", "c").uuid == primary.catalog.get("test", "c").uuid
    assert [ix.name for ix in secondary.catalog.get("test", "c").indexes] == ["_id_", "a_1"]
    assert secondary.catalog.get("test", "d") is None
    assert raw_entries(secondary) == entries           # the same history, byte for byte
    assert secondary.oplog.last_ts == primary.oplog.last_ts


def test_applying_again_is_harmless(pair):
    primary, secondary = pair
    run = Runner(primary)
    run.insert("c", {"_id": 1, "n": 0})
    for i in range(1, 4):
        run({"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$set": {"n": i}}}]})
    entries = raw_entries(primary)
    secondary.apply_oplog(entries)
    before = dump(secondary, "c")
    # the same entries again (a member killed after applying, before it saved its position)
    secondary.apply_oplog(entries)
    secondary.apply_oplog(entries[1:2])       # even an old insert over the newer document
    secondary.apply_oplog(entries[2:])
    assert dump(secondary, "c") == before == [{"_id": 1, "n": 3}]


def test_a_transaction_applies_atomically(pair):
    primary, secondary = pair
    run = Runner(primary)
    run.insert("c", {"_id": 0})
    entries = raw_entries(primary)
    applyops = bson.encode({"op": "c", "ns": "admin.$cmd", "o": {"applyOps": [
        {"op": "i", "ns": "test.c", "o": {"_id": 1}, "o2": {"_id": 1}},
        {"op": "i", "ns": "test.c", "o": {"_id": 2}, "o2": {"_id": 2}}]},
        "ts": bson.Timestamp(2**31 - 1, 1), "t": bson.int64.Int64(1), "v": bson.int64.Int64(2)})
    secondary.apply_oplog(entries + [applyops])
    assert dump(secondary, "c") == [{"_id": 0}, {"_id": 1}, {"_id": 2}]


def test_an_unknown_entry_fails_the_whole_batch(pair):
    primary, secondary = pair
    Runner(primary).insert("c", {"_id": 1})
    bad = bson.encode({"op": "c", "ns": "test.$cmd", "o": {"emptycapped": "c"},
                       "ts": bson.Timestamp(2**31 - 1, 1), "t": bson.int64.Int64(1)})
    with pytest.raises(OplogApplyError, match="emptycapped"):
        secondary.apply_oplog(raw_entries(primary) + [bad])
    assert secondary.catalog.get("test", "c") is None       # nothing of the batch stayed
    assert secondary.oplog.last_ts is None


def test_roll_back_restores_documents_and_truncates_the_oplog(pair):
    primary, secondary = pair
    run = Runner(primary)
    run.insert("c", {"_id": 1, "v": "kept"}, {"_id": 2, "v": "kept"})
    common = primary.oplog.last_ts
    run({"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$set": {"v": "lost"}}}]})
    run.insert("c", {"_id": 3, "v": "lost"})
    entries = raw_entries(primary)
    from ginkgodb.engine import oplog_touched_documents
    after = [bson.decode(r) for r in entries if bson.decode(r)["ts"] > common]
    assert [oplog_touched_documents(e) for e in after] == [[("test", "c", 1)], [("test", "c", 3)]]
    removed = primary.roll_back_oplog(common, [("test", "c", 1, {"_id": 1, "v": "kept"}), ("test", "c", 3, None)])
    assert removed == 2
    assert dump(primary, "c") == [{"_id": 1, "v": "kept"}, {"_id": 2, "v": "kept"}]
    assert primary.oplog.last_ts == common and raw_entries(primary) == entries[:-2]
    run.insert("c", {"_id": 4})        # the oplog goes on from the common point, record ids contiguous
    assert len(raw_entries(primary)) == len(entries) - 1
    assert dump(primary, "c")[-1] == {"_id": 4}
    secondary.apply_oplog(raw_entries(primary))
    assert dump(secondary, "c") == dump(primary, "c")


def test_catalog_changes_are_not_undoable_by_refetching():
    from ginkgodb.engine import oplog_touched_documents
    assert oplog_touched_documents({"op": "c", "ns": "test.$cmd", "o": {"create": "x"}}) is None
    assert oplog_touched_documents({"op": "n", "ns": "", "o": {"msg": "new primary"}}) == []


def test_a_tailable_oplog_cursor_seeks_to_its_start(engine):
    run = Runner(engine)
    for i in range(50):
        run.insert("c", {"_id": i})
    entries = [bson.decode(r) for r in raw_entries(engine)]
    start = entries[40]["ts"]
    cursor = engine.tail("local", "oplog.rs", {"ts": {"$gt": start}})
    assert cursor.last_rid > 0          # positioned, not scanning from the first entry
    got = [bson.decode(d.raw)["ts"] for d in cursor.next_batch(100)]
    assert got == [e["ts"] for e in entries[41:]]
    gte = engine.tail("local", "oplog.rs", {"ts": {"$gte": start}})
    assert [bson.decode(d.raw)["ts"] for d in gte.next_batch(100)] == [e["ts"] for e in entries[40:]]
    after_all = engine.tail("local", "oplog.rs", {"ts": {"$gt": entries[-1]["ts"]}})
    assert after_all.next_batch(100) == []
    run.insert("c", {"_id": 99})
    assert [bson.decode(d.raw)["o"]["_id"] for d in after_all.next_batch(100)] == [99]
    assert after_all.last_rid > 0 and engine.tail("local", "oplog.rs", {"ts": {"$gt": entries[-1]["ts"]}}).last_rid
