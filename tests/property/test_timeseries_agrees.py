"""A time-series collection answers finds, counts, aggregations, deletes and updates exactly as an
ordinary collection holding the same measurements does (bucket predicates only narrow)."""
from __future__ import annotations

import datetime

import bson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.engines import ENGINES, fresh_engine

from ginkgodb.commands import CommandContext, dispatch

BASE = datetime.datetime(2024, 3, 1)
# minutes over ~3 days: several buckets per meta at "seconds" (1 h) and "minutes" (1 day) spans
times = st.integers(0, 4000).map(lambda m: BASE + datetime.timedelta(minutes=m, milliseconds=m % 7))
metas = st.one_of(st.sampled_from(["a", "b"]), st.integers(0, 2), st.none(),
                  st.fixed_dictionaries({"s": st.integers(0, 2)}, optional={"k": st.sampled_from(["x", "y"])}))
values = st.one_of(st.integers(-3, 3), st.floats(-3, 3, allow_nan=False), st.sampled_from(["p", "q"]))
measurements = st.lists(st.fixed_dictionaries({"t": times}, optional={"m": metas, "v": values, "w": values}),
                        max_size=60)
moments = times
time_cond = st.one_of(
    moments,
    st.builds(lambda op, v: {op: v}, st.sampled_from(["$gt", "$gte", "$lt", "$lte", "$eq", "$ne"]), moments),
    st.builds(lambda a, b: {"$gte": a, "$lt": b}, moments, moments),
    st.builds(lambda a: {"$in": [a]}, moments),
)
meta_cond = st.one_of(metas, st.builds(lambda v: {"$ne": v}, metas), st.builds(lambda b: {"$exists": b}, st.booleans()),
                      st.builds(lambda vs: {"$in": vs}, st.lists(metas, max_size=3)))
clause = st.one_of(
    st.builds(lambda c: {"t": c}, time_cond),
    st.builds(lambda c: {"m": c}, meta_cond),
    st.builds(lambda c: {"m.s": c}, st.integers(0, 2)),
    st.builds(lambda v: {"v": {"$gte": v}}, values),
)
filters = st.one_of(
    st.lists(clause, max_size=3).map(lambda cs: {k: v for c in cs for k, v in c.items()}),
    st.builds(lambda xs: {"$or": xs}, st.lists(clause, min_size=1, max_size=3)),
    st.builds(lambda xs: {"$and": xs}, st.lists(clause, min_size=1, max_size=3)),
)
granularities = st.sampled_from([{"granularity": "seconds"}, {"granularity": "minutes"},
                                 {"bucketMaxSpanSeconds": 7200, "bucketRoundingSeconds": 7200}])


def _docs(ctx, cmd) -> list:
    reply = dispatch(ctx, {**cmd, "$db": "t"})
    assert reply["ok"] == 1.0, reply
    return sorted((bson.decode(d.raw) for d in reply["cursor"]["firstBatch"]), key=lambda d: d["_id"])


def _setup(ctx, documents, options) -> None:
    ts = {"timeField": "t", "metaField": "m", **options}
    assert dispatch(ctx, {"create": "ts", "timeseries": ts, "$db": "t"})["ok"] == 1.0
    docs = [dict(d, _id=i) for i, d in enumerate(documents)]
    for chunk in (docs[:20], docs[20:]):   # two batches: the second finds the first's buckets in storage
        if chunk:
            for coll in ("ts", "plain"):
                assert dispatch(ctx, {"insert": coll, "documents": chunk, "$db": "t"})["ok"] == 1.0


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("engines")


@pytest.mark.parametrize("kind", ENGINES)
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(measurements, granularities, filters)
def test_reads_agree_with_an_ordinary_collection(kind, scratch, documents, options, filt):
    with fresh_engine(kind, scratch) as engine:
        ctx = CommandContext(engine=engine)
        _setup(ctx, documents, options)
        assert _docs(ctx, {"find": "ts", "filter": filt, "batchSize": 10**6}) == \
            _docs(ctx, {"find": "plain", "filter": filt, "batchSize": 10**6})
        pipeline = [{"$match": filt}, {"$project": {"_id": 1, "v": 1}}]
        assert _docs(ctx, {"aggregate": "ts", "pipeline": pipeline, "cursor": {}}) == \
            _docs(ctx, {"aggregate": "plain", "pipeline": pipeline, "cursor": {}})
        counts = [dispatch(ctx, {"count": c, "query": filt, "$db": "t"})["n"] for c in ("ts", "plain")]
        assert counts[0] == counts[1]


@pytest.mark.parametrize("kind", ENGINES)
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(measurements, granularities, filters, filters, st.integers(0, 2))
def test_writes_agree_with_an_ordinary_collection(kind, scratch, documents, options, filt, other, new_meta):
    with fresh_engine(kind, scratch) as engine:
        ctx = CommandContext(engine=engine)
        _setup(ctx, documents, options)
        for coll in ("ts", "plain"):
            reply = dispatch(ctx, {"update": coll, "updates": [{"q": other, "u": {"$set": {"m": new_meta}},
                                                                "multi": True}], "$db": "t"})
            assert reply["ok"] == 1.0, reply
        assert _docs(ctx, {"find": "ts", "filter": {}, "batchSize": 10**6}) == \
            _docs(ctx, {"find": "plain", "filter": {}, "batchSize": 10**6})
        deleted = [dispatch(ctx, {"delete": c, "deletes": [{"q": filt, "limit": 0}], "$db": "t"})["n"]
                   for c in ("ts", "plain")]
        assert deleted[0] == deleted[1]
        assert _docs(ctx, {"find": "ts", "filter": {}, "batchSize": 10**6}) == \
            _docs(ctx, {"find": "plain", "filter": {}, "batchSize": 10**6})
