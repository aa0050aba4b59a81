"""Whatever plan the planner picks, a query returns exactly what a collection scan returns."""
from __future__ import annotations

import bson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.engines import ENGINES, fresh_engine

from ginkgodb.commands import CommandContext, dispatch

scalars = st.one_of(st.none(), st.integers(-5, 5), st.floats(-5, 5, allow_nan=False),
                    st.sampled_from(["", "a", "ab", "abc", "b", "ba"]), st.booleans())
values = st.one_of(scalars, st.lists(scalars, max_size=3), st.fixed_dictionaries({"x": scalars}))
docs = st.lists(st.fixed_dictionaries({}, optional={"a": values, "b": values, "c": scalars}), max_size=25)

ops = st.sampled_from(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte"])
field_cond = st.one_of(
    scalars,
    st.builds(lambda op, v: {op: v}, ops, scalars),
    st.builds(lambda a, b: {"$gte": a, "$lt": b}, scalars, scalars),
    st.builds(lambda vs: {"$in": vs}, st.lists(scalars, max_size=3)),
    st.builds(lambda vs: {"$nin": vs}, st.lists(scalars, max_size=2)),
    st.builds(lambda b: {"$exists": b}, st.booleans()),
    st.builds(lambda p: {"$regex": "^" + p}, st.sampled_from(["a", "ab", "b", ""])),
    st.builds(lambda v: {"$elemMatch": {"$gte": v}}, scalars),
    st.builds(lambda v: {"$not": {"$gt": v}}, scalars),
)
fields = st.sampled_from(["a", "b", "c", "a.x"])
filters = st.one_of(
    st.dictionaries(fields, field_cond, max_size=2),
    st.builds(lambda xs: {"$or": xs}, st.lists(st.dictionaries(fields, field_cond, min_size=1, max_size=1),
                                                 min_size=1, max_size=3)),
)
index_sets = st.lists(st.sampled_from([[("a", 1)], [("a", -1), ("b", 1)], [("b", 1), ("a", 1)], [("c", 1)],
                                        [("a.x", 1)], [("c", "hashed")], [("c", 1), ("b", 1)],
                                        [("c", -1), ("a", 1), ("b", -1)], [("c", 1), ("a.x", 1)]]),
                     max_size=3, unique_by=str)


def _ids(ctx, cmd):
    reply = dispatch(ctx, cmd)
    assert reply["ok"] == 1.0, reply
    return sorted(str(bson.decode(d.raw)["_id"]) for d in reply["cursor"]["firstBatch"])


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("engines")


@pytest.mark.parametrize("kind", ENGINES)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs, index_sets, filters)
def test_index_plans_return_the_same_documents_as_a_collection_scan(kind, scratch, documents, indexes, filt):
    with fresh_engine(kind, scratch) as engine:
        ctx = CommandContext(engine=engine)
        for i, d in enumerate(documents):
            d = dict(d, _id=i)
            assert dispatch(ctx, {"insert": "c", "documents": [d], "$db": "t"})["ok"] == 1.0
        built = []
        for spec in indexes:
            key = dict(spec)
            reply = dispatch(ctx, {"createIndexes": "c", "indexes": [{"key": key, "name": str(spec)}], "$db": "t"})
            if reply["ok"] != 1.0:
                assert reply["code"] == 171, reply  # parallel arrays: the build fails and leaves nothing
                continue
            built.append(spec)
        base = {"find": "c", "filter": filt, "batchSize": 1000, "$db": "t"}
        reply = dispatch(ctx, {**base, "hint": {"$natural": 1}})
        if reply["ok"] != 1.0:
            return  # an invalid filter must fail the same way whatever the plan
        expected = sorted(str(bson.decode(d.raw)["_id"]) for d in reply["cursor"]["firstBatch"])
        assert _ids(ctx, base) == expected, dispatch(ctx, {"explain": base, "verbosity": "queryPlanner", "$db": "t"})
        for spec in built:
            assert _ids(ctx, {**base, "hint": str(spec)}) == expected, spec
