"""Compressed records round-trip: any document stored under any codec reads back byte for byte.

On LMDB the records of a compressed collection are envelopes (when they shrink); the in-memory
engine keeps every document plain whatever the collection asks (docs/design/storage-layout.md),
so there the same test checks that the option changes nothing but the catalog.
"""
from __future__ import annotations

import itertools

import bson
import bson.errors
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from strategies import FIELD_NAMES, bson_values
from support.engines import ENGINES, fresh_engine
from support.runner import Runner

from ginkgodb.commands import dispatch
from ginkgodb.engine import layout, record_format
from ginkgodb.storage.kv import prefix_end

CODECS = ("zstd", "snappy", "zlib", "none")
#: some documents carry a long repetitive field, so that every codec's envelope path is taken
PADDING = st.one_of(st.just(""), st.text(alphabet="ab ", min_size=0, max_size=3).map(lambda s: (s or "x") * 200))
documents = st.tuples(st.dictionaries(FIELD_NAMES.filter(lambda n: n != "_id"), bson_values(), max_size=6), PADDING)


@pytest.fixture(scope="module", params=ENGINES)
def setup(request, tmp_path_factory):
    with fresh_engine(request.param, tmp_path_factory.mktemp("compression")) as engine:
        run = Runner(engine)
        for codec in CODECS:
            run({"create": codec, "storageEngine": {"ginkgodb": {"compression": codec}}})
        yield request.param, engine, run, itertools.count()


def _encodable(doc: dict) -> bytes:
    try:
        return bson.encode(doc)
    except bson.errors.InvalidDocument:   # e.g. a regex with a NUL: no BSON exists for it
        assume(False)
        raise


def _raws(run, coll, filt=None) -> list[bytes]:
    """The documents find answers, as the bytes sent (decoding them is not this test's subject)."""
    reply = dispatch(run.ctx, {"find": coll, "filter": filt or {}, "batchSize": 100000, "$db": "test"})
    return [d.raw for d in reply["cursor"]["firstBatch"]]


def _stored_values(engine, name):
    coll = engine.collection("test", name)
    with engine.kv.snapshot() as snap:
        return [v for _, v in snap.scan(coll.record_prefix, prefix_end(coll.record_prefix))]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(codec=st.sampled_from(CODECS), drawn=documents)
def test_documents_read_back_unchanged(setup, codec, drawn):
    kind, engine, run, ids = setup
    fields, padding = drawn
    doc = {"_id": next(ids), **fields, **({"pad": padding} if padding else {})}
    raw = _encodable(doc)
    reply = run.raw({"insert": codec, "documents": [doc]})
    if reply["ok"] != 1.0 or reply.get("writeErrors"):
        return  # a document mongod refuses too (e.g. a top-level $-prefixed field): not this test's subject
    assert _raws(run, codec, {"_id": doc["_id"]}) == [raw]
    assert raw in _raws(run, codec)
    values = _stored_values(engine, codec)
    if kind == "memory" or codec == "none":
        assert not any(record_format.is_compressed(v) for v in values)
    elif len(padding) >= 200:
        assert any(record_format.is_compressed(v) for v in values)


@given(codec=st.sampled_from(CODECS[:3]), drawn=documents)
@settings(max_examples=200, deadline=None)
def test_envelopes_decode_to_the_document(codec, drawn):
    fields, padding = drawn
    raw = _encodable({**fields, "pad": padding})
    stored = record_format.encode(raw, codec)
    assert record_format.document(stored) == raw
    assert record_format.document_size(stored) == len(raw)
    assert record_format.is_compressed(stored) == (stored != raw)
    assert len(stored) <= len(raw)
    if len(padding) >= 200:
        assert record_format.is_compressed(stored)


def test_the_envelope_mark_is_never_a_bson_length():
    """Byte 3 of a stored BSON document is the top byte of its length: 0 or 1 (16 MiB and change)."""
    biggest = bson.encode({"s": "x" * (16 * 1024 * 1024)})
    assert biggest[3] < 0xFF and not record_format.is_compressed(biggest)
    assert layout.FORMAT_VERSION == 1


_DICTIONARY: list = []


def _trained_dictionary() -> int:
    """A dictionary trained once on documents of the benchmark's shape (its id, registered)."""
    if not _DICTIONARY:
        samples = [bson.encode({"_id": i, "sku": f"SKU-{i:09d}", "name": f"item {i % 97}", "qty": i % 50,
                                "tags": ["red", "green", "blue"][: i % 3 + 1], "note": "cedar onyx " * (i % 5)})
                   for i in range(1000)]
        data = record_format.train_dictionary(samples)
        assert data is not None
        _DICTIONARY.append(record_format.register_dictionary(data))
    return _DICTIONARY[0]


@settings(max_examples=200, deadline=None)
@given(documents)
def test_a_trained_dictionary_round_trips_any_document(case):
    doc, padding = case
    raw = _encodable({"_id": 1, **doc, **({"pad": padding} if padding else {})})
    stored = record_format.encode(raw, "zstd", _trained_dictionary())
    assert record_format.document(stored) == raw
    assert record_format.document_size(stored) == len(raw)
    assert stored == raw or (stored[0] == 4 and len(stored) < len(raw))
