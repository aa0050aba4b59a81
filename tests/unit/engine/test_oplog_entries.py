"""The oplog's entry builder: the batch forms (built with no Python call per document) give the
bytes of the one-document forms."""
from __future__ import annotations

import bson
from bson.binary import UUID_SUBTYPE, Binary
from bson.objectid import ObjectId

from ginkgodb.engine import oplog_entries as E
from ginkgodb.engine.batch import Insert

UUID = Binary(bytes(range(16)), UUID_SUBTYPE)


def _inserts(ids: list) -> list[Insert]:
    return [Insert("db.c", UUID, i + 1, bson.encode({"_id": v, "n": i, "s": "x" * i})) for i, v in enumerate(ids)]


def test_a_batch_of_inserts_is_each_insert():
    for ids in ([ObjectId() for _ in range(5)], [1, "a", 2.5], [ObjectId(), 7, ObjectId()]):
        ops = _inserts(ids)
        builder = E.EntryBuilder()
        assert builder.inserts(ops) == [E.EntryBuilder().insert(op) for op in ops]


def test_the_stamped_entries_are_each_stamped_entry():
    bodies = E.EntryBuilder().inserts(_inserts([ObjectId() for _ in range(4)]))
    tail = E.tail(3, 1_700_000_000_000)
    entries = E.finish_all(bodies, 1_700_000_000, 41, tail)
    assert entries == [E.finish_one(body, 1_700_000_000, 41 + i, tail) for i, body in enumerate(bodies)]
    decoded = [bson.decode(entry) for entry in entries]
    assert [d["ts"].inc for d in decoded] == [41, 42, 43, 44]
    assert all(d["op"] == "i" and d["o2"] == {"_id": d["o"]["_id"]} and d["t"] == 3 for d in decoded)
