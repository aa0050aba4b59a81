"""A multi-document delete removes index entries with keys read out of the documents' bytes
(records.delete_record without a decoded document): every entry goes, whatever the values, and
the documents are decoded only when an index needs more than one top-level value."""
from __future__ import annotations

import datetime

import bson
import pytest
from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.max_key import MaxKey
from bson.min_key import MinKey
from bson.objectid import ObjectId
from bson.raw_bson import RawBSONDocument
from bson.regex import Regex
from hypothesis import given, settings
from hypothesis import strategies as st
from support.index_entries import entries

from ginkgodb.bsonutil.delta import top_level_values
from ginkgodb.engine import records

VALUES = [1, -7, 2**40, Int64(5), 1.5, -0.0, float("inf"), float("nan"), "", "s", "ü", True, False,
          ObjectId(b"a" * 12), datetime.datetime(2024, 1, 2, 3, 4, 5, 6000), Decimal128("1.25"),
          bson.Binary(b"\x01", 0), bson.Binary(b"\x02", 5), Regex("^a", "i"), bson.Code("x"),
          bson.Timestamp(1, 2), MinKey(), MaxKey(), None, {"x": 1}, [1, 2], [], {}]


def _entries(engine, db: str, coll: str) -> dict[str, list]:
    """Each index's entries (key + record id), from storage."""
    return entries(engine, engine.catalog.collection(db, coll))[0]


def _expected(engine, db: str, coll: str) -> dict[str, list]:
    """Each index's entries as the stored documents make them."""
    return entries(engine, engine.catalog.collection(db, coll))[1]


@pytest.fixture
def counted_decodes(monkeypatch):
    calls = []
    real = records.bson.decode

    def decode(raw, *a, **k):
        calls.append(raw)
        return real(raw, *a, **k)
    monkeypatch.setattr(records.bson, "decode", decode)
    return calls


def test_every_value_type_leaves_no_entry_behind(engine):
    engine.insert("db", "c", [{"_id": i, "a": v, "b": i, "keep": i % 2} for i, v in enumerate(VALUES)])
    engine.create_indexes("db", "c", [{"key": {"b": 1}, "name": "b_1", "unique": True},
                                      {"key": {"keep": 1}, "name": "keep_1"}])
    engine.delete("db", "c", [_statement({"keep": 0})])
    assert _entries(engine, "db", "c") == _expected(engine, "db", "c")
    engine.create_indexes("db", "c", [{"key": {"a": 1}, "name": "a_1"}])   # arrays: a multikey index
    engine.delete("db", "c", [_statement({})])
    assert _entries(engine, "db", "c") == {"_id_": [], "b_1": [], "keep_1": [], "a_1": []}


def test_plain_documents_are_not_decoded(engine, counted_decodes):
    engine.insert("db", "c", [{"_id": i, "k": i % 3, "s": f"s{i}", "x": {"deep": [i]}} for i in range(30)])
    engine.create_indexes("db", "c", [{"key": {"k": 1}, "name": "k_1"},
                                      {"key": {"s": 1}, "name": "s_1", "unique": True}])
    counted_decodes.clear()
    out = engine.delete("db", "c", [_statement({"k": {"$lt": 2}})])
    assert out.n == 20 and counted_decodes == []
    assert _entries(engine, "db", "c") == _expected(engine, "db", "c")


def test_values_an_index_reads_whole_are_decoded(engine, counted_decodes):
    engine.insert("db", "c", [{"_id": 1, "k": 1}, {"_id": 2, "k": None}, {"_id": 3}, {"_id": 4, "k": {"a": 1}}])
    engine.create_indexes("db", "c", [{"key": {"k": 1}, "name": "k_1"}])
    counted_decodes.clear()
    assert engine.delete("db", "c", [_statement({})]).n == 4
    assert len(counted_decodes) == 3          # null, missing and a document: the general keys
    assert _entries(engine, "db", "c") == {"_id_": [], "k_1": []}


@pytest.mark.parametrize("spec", [{"k": "hashed"}, {"k": 1, "s": 1}, {"k": -1}, {"s.t": 1}, {"k": 1, "$sparse": 1}])
def test_other_index_kinds_take_the_decoded_document(engine, spec, counted_decodes):
    engine.insert("db", "c", [{"_id": i, "k": i, "s": {"t": i}} for i in range(5)])
    key = {f: d for f, d in spec.items() if f != "$sparse"}
    engine.create_indexes("db", "c", [{"key": key, "name": "ix", **({"sparse": True} if "$sparse" in spec else {})}])
    counted_decodes.clear()
    assert engine.delete("db", "c", [_statement({})]).n == 5
    assert len(counted_decodes) == 5
    assert _entries(engine, "db", "c") == {"_id_": [], "ix": []}


def test_a_document_with_a_field_twice_loses_the_entry_its_decoded_value_made(engine):
    """The first value is read from the bytes, the decoded document keeps the last: the entry of
    the first is not there, so the document is decoded and the right entry removed."""
    raw = b"".join([b"\x10_id\x00", (1).to_bytes(4, "little"), b"\x10k\x00", (1).to_bytes(4, "little"),
                    b"\x10k\x00", (2).to_bytes(4, "little")])
    doc = RawBSONDocument((len(raw) + 5).to_bytes(4, "little") + raw + b"\x00")
    engine.create_indexes("db", "c", [{"key": {"k": 1}, "name": "k_1"}])
    engine.insert("db", "c", [doc, {"_id": 2, "k": 1}])
    assert engine.delete("db", "c", [_statement({})]).n == 2
    assert _entries(engine, "db", "c") == {"_id_": [], "k_1": []}


def _statement(q: dict):
    from ginkgodb.engine.writes import DeleteStatement
    return DeleteStatement(q=q, limit=0)


simple = st.one_of(st.integers(-2**40, 2**40), st.floats(allow_nan=False), st.text(max_size=5), st.booleans(),
                   st.none(), st.sampled_from([v for v in VALUES if not isinstance(v, float)]))
documents = st.dictionaries(st.sampled_from(["a", "b", "c", "d", "_id"]),
                            st.one_of(simple, st.lists(simple, max_size=2), st.dictionaries(st.just("x"), simple)),
                            max_size=5)


@settings(max_examples=300, deadline=None)
@given(documents, st.sets(st.sampled_from([b"a", b"b", b"c", b"_id", b"zz"]), min_size=1))
def test_top_level_values_are_the_decoded_ones(doc, names):
    raw = bson.encode(doc)
    decoded = bson.decode(raw)
    got = top_level_values(raw, frozenset(names))
    expected = {n: (None if isinstance(decoded[n.decode()], (list, dict)) else decoded[n.decode()])
                for n in names if n.decode() in decoded}
    assert got.keys() == expected.keys()
    for name, value in expected.items():
        assert bson.encode({"v": got[name]}) == bson.encode({"v": value}), name
