"""A clustered collection answers every query as an ordinary collection holding the same
documents does; its records are in `_id` order, and its secondary indexes hold exactly the keys
of its documents (validate)."""
from __future__ import annotations

import bson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.engines import ENGINES, fresh_engine

from ginkgodb.bsonutil.compare import compare
from ginkgodb.commands import CommandContext, dispatch

ids = st.one_of(st.integers(-50, 50), st.floats(-50, 50, allow_nan=False),
                st.text("abc", max_size=3), st.booleans(), st.none(), st.fixed_dictionaries({"k": st.integers(0, 3)}))
docs = st.lists(st.fixed_dictionaries({"_id": ids}, optional={"a": st.integers(0, 3)}), max_size=30)
bounds = st.one_of(st.integers(-50, 50), st.text("abc", max_size=2))
filters = st.one_of(
    st.just({}),
    st.builds(lambda v: {"_id": v}, ids),
    st.builds(lambda op, v: {"_id": {op: v}}, st.sampled_from(["$gt", "$gte", "$lt", "$lte", "$ne"]), bounds),
    st.builds(lambda lo, hi: {"_id": {"$gte": lo, "$lt": hi}}, bounds, bounds),
    st.builds(lambda v, a: {"_id": {"$gt": v}, "a": a}, bounds, st.integers(0, 3)),
    st.builds(lambda a: {"a": {"$gte": a}}, st.integers(0, 3)),
)


def run(ctx, cmd):
    reply = dispatch(ctx, {**cmd, "$db": "t"})
    assert reply["ok"] == 1.0, reply
    return reply


def found(ctx, coll, filt, sort):
    reply = run(ctx, {"find": coll, "filter": filt, "sort": sort, "batchSize": 1000})
    return [bson.decode(d.raw) for d in reply["cursor"]["firstBatch"]]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("engines")


@pytest.mark.parametrize("kind", ENGINES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs, filters, st.sampled_from([{}, {"_id": 1}, {"_id": -1}, {"a": 1, "_id": 1}]))
def test_clustered_collections_agree_with_ordinary_ones(kind, scratch, documents, filt, sort):
    with fresh_engine(kind, scratch) as engine:
        ctx = CommandContext(engine=engine)
        run(ctx, {"create": "k", "clusteredIndex": {"key": {"_id": 1}, "unique": True}})
        for coll in ("k", "o"):
            run(ctx, {"createIndexes": coll, "indexes": [{"key": {"a": 1}, "name": "a_1"}]})
            for d in documents:
                dispatch(ctx, {"insert": coll, "documents": [d], "$db": "t"})  # duplicates fail alike
        natural = found(ctx, "k", {}, {})
        assert all(compare(x["_id"], y["_id"]) < 0 for x, y in zip(natural, natural[1:]))
        got, want = found(ctx, "k", filt, sort), found(ctx, "o", filt, sort)
        key = repr if not sort else None
        if key is None:
            assert got == want
        else:
            assert sorted(got, key=key) == sorted(want, key=key)
        assert run(ctx, {"validate": "k", "full": True})["valid"] is True
        assert run(ctx, {"count": "k"})["n"] == run(ctx, {"count": "o"})["n"]
