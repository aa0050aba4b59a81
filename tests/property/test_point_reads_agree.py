"""A find by `_id` answered without a cursor (reads.find_point) returns exactly what a collection
scan returns, byte for byte, whatever the `_id` values' types."""
from __future__ import annotations

import datetime

import pytest
from bson.int64 import Int64
from bson.objectid import ObjectId
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.engines import ENGINES, fresh_engine

from ginkgodb.commands import CommandContext, dispatch

ids = st.one_of(
    st.integers(-3, 3), st.builds(Int64, st.integers(-3, 3)), st.sampled_from([0.0, -0.0, 1.5, 2.0, float("inf")]),
    st.sampled_from(["", "a", "A", "ab"]), st.none(), st.booleans(),
    st.sampled_from([ObjectId(b"a" * 12), ObjectId(b"b" * 12)]),
    st.sampled_from([datetime.datetime(2024, 1, 1), datetime.datetime(1960, 5, 5)]),
    st.fixed_dictionaries({"x": st.integers(0, 2)}), st.lists(st.integers(0, 2), max_size=2),
)
queries = st.one_of(ids, st.lists(st.integers(0, 2), max_size=2))


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("engines")


def _batch(ctx, cmd):
    reply = dispatch(ctx, cmd)
    return reply["ok"], [d.raw for d in reply["cursor"]["firstBatch"]] if reply["ok"] == 1.0 else reply["code"]


@pytest.mark.parametrize("kind", ENGINES)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(ids, max_size=8), queries)
def test_point_reads_return_what_a_collection_scan_returns(kind, scratch, stored, value):
    with fresh_engine(kind, scratch) as engine:
        ctx = CommandContext(engine=engine)
        for i, _id in enumerate(stored):
            dispatch(ctx, {"insert": "c", "documents": [{"_id": _id, "i": i}], "$db": "t"})  # duplicates fail
        base = {"find": "c", "filter": {"_id": value}, "$db": "t"}
        expected = _batch(ctx, {**base, "hint": {"$natural": 1}, "batchSize": 1000})
        assert _batch(ctx, {**base, "singleBatch": True, "limit": 1}) == (
            expected[0], expected[1][:1] if expected[0] == 1.0 else expected[1])
        assert _batch(ctx, base) == expected
