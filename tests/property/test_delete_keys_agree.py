"""After inserts and deletes of any documents, every index holds exactly the keys of the stored
documents, when delete_many removes entries with keys read out of the documents' bytes
(records.delete_record): missing, null, array and document values, fields given twice, and
indexes that turn multikey on the way."""
from __future__ import annotations

import bson
import pytest
from bson.raw_bson import RawBSONDocument
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.engines import ENGINES, fresh_engine
from support.index_entries import assert_indexes_match_documents

from ginkgodb.commands import CommandContext, dispatch

scalars = st.one_of(st.integers(-3, 3), st.sampled_from([1.5, -0.0, "", "a", "b", True, None]),
                    st.builds(bson.Int64, st.integers(-3, 3)))
values = st.one_of(scalars, scalars, st.lists(scalars, max_size=2), st.fixed_dictionaries({"x": scalars}))
fields = st.dictionaries(st.sampled_from(["a", "b", "c"]), values, max_size=3)
#: a document given as raw BSON: its fields in order, a name possibly twice
raw_fields = st.lists(st.tuples(st.sampled_from(["a", "b"]), scalars), max_size=3)
documents = st.lists(st.one_of(fields.map(lambda d: ("dict", d)), raw_fields.map(lambda f: ("raw", f))),
                     max_size=12)
filters = st.one_of(st.just({}), st.builds(lambda v: {"a": v}, scalars),
                    st.builds(lambda v: {"b": {"$gte": v}}, st.integers(-3, 3)),
                    st.builds(lambda v: {"_id": {"$lt": v}}, st.integers(0, 12)))
INDEXES = [[("a", 1)], [("b", 1)], [("a", 1), ("b", 1)]]


def _raw(i: int, pairs: list) -> RawBSONDocument:
    body = bson.encode({"_id": i})[4:-1] + b"".join(bson.encode({name: v})[4:-1] for name, v in pairs)
    return RawBSONDocument((len(body) + 5).to_bytes(4, "little") + body + b"\x00")


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("engines")


@pytest.mark.parametrize("kind", ENGINES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sets(st.sampled_from(range(len(INDEXES)))), documents, st.lists(filters, min_size=1, max_size=3),
       st.booleans())
def test_indexes_match_documents_after_deletes(kind, scratch, chosen, docs, deletes, index_first):
    with fresh_engine(kind, scratch) as engine:
        ctx = CommandContext(engine=engine)

        def create_indexes() -> None:
            for i in sorted(chosen):
                reply = dispatch(ctx, {"createIndexes": "c", "indexes": [{"key": dict(INDEXES[i]), "name": f"i{i}"}],
                                       "$db": "t"})
                assert reply["ok"] == 1.0 or reply["code"] == 171, reply   # parallel arrays

        dispatch(ctx, {"create": "c", "$db": "t"})
        if index_first:
            create_indexes()
        for i, (form, doc) in enumerate(docs):
            d = _raw(i, doc) if form == "raw" else {"_id": i, **doc}
            dispatch(ctx, {"insert": "c", "documents": [d], "$db": "t"})   # parallel arrays may fail it
        if not index_first:
            create_indexes()
        for q in deletes:
            reply = dispatch(ctx, {"delete": "c", "deletes": [{"q": q, "limit": 0}], "$db": "t"})
            assert reply["ok"] == 1.0, reply
            assert_indexes_match_documents(engine, engine.collection("t", "c"))
