"""A covered plan (PROJECTION_COVERED, documents read only where a key cannot say a value's
type) returns exactly what the uncovered plan returns: the same documents, fields and BSON."""
from __future__ import annotations

import bson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.engines import ENGINES, fresh_engine

from ginkgodb.commands import CommandContext, dispatch

scalars = st.one_of(st.none(), st.integers(-3, 3), st.floats(-3, 3, allow_nan=False),
                    st.sampled_from(["", "a", "ab", "b"]), st.booleans(),
                    st.sampled_from([bson.Int64(2), bson.ObjectId("65a000000000000000000001")]))
values = st.one_of(scalars, st.lists(scalars, max_size=2), st.fixed_dictionaries({"x": scalars}))
docs = st.lists(st.fixed_dictionaries({}, optional={"a": values, "b": scalars, "c": scalars}), max_size=20)
ops = st.sampled_from(["$eq", "$gt", "$gte", "$lt", "$lte"])
conds = st.one_of(scalars, st.builds(lambda op, v: {op: v}, ops, scalars),
                  st.builds(lambda vs: {"$in": vs}, st.lists(scalars, max_size=3)))
filters = st.dictionaries(st.sampled_from(["a", "b", "a.x"]), conds, max_size=2)
indexes = st.sampled_from([[("a", 1), ("b", 1)], [("b", -1), ("a", 1)], [("a.x", 1), ("b", 1)], [("b", 1)]])
projections = st.builds(lambda fs, id_: {**{f: 1 for f in fs}, **({"_id": 0} if not id_ else {})},
                        st.lists(st.sampled_from(["a", "b", "a.x"]), min_size=1, max_size=2, unique=True),
                        st.booleans())
sorts = st.one_of(st.none(), st.sampled_from([{"a": 1}, {"b": -1}]))


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("engines")


def _find(ctx, cmd):
    reply = dispatch(ctx, {**cmd, "$db": "t"})
    if reply["ok"] != 1.0:
        return ("error", reply["code"])
    return [d.raw if hasattr(d, "raw") else bson.encode(d) for d in reply["cursor"]["firstBatch"]]


def _canonical(raws):
    if isinstance(raws, tuple):
        return raws
    # BSON bytes with fields in sorted order: the same values and types, order aside
    return sorted(bson.encode(dict(sorted(bson.decode(r).items()))) for r in raws)


@pytest.mark.parametrize("kind", ENGINES)
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs, indexes, filters, projections, sorts)
def test_covered_plans_return_what_the_uncovered_plan_returns(kind, scratch, documents, index, filt,
                                                               projection, sort):
    with fresh_engine(kind, scratch) as engine:
        ctx = CommandContext(engine=engine)
        for i, d in enumerate(documents):
            assert dispatch(ctx, {"insert": "c", "documents": [dict(d, _id=i)], "$db": "t"})["ok"] == 1.0
        dispatch(ctx, {"createIndexes": "c", "indexes": [{"key": dict(index), "name": "ix"}], "$db": "t"})
        cmd = {"find": "c", "filter": filt, "projection": projection, "batchSize": 1000}
        if sort:
            cmd["sort"] = sort
        planned = _find(ctx, cmd)
        hinted = _find(ctx, {**cmd, "hint": "ix"})
        scanned = _find(ctx, {**cmd, "hint": {"$natural": 1}})
        assert _canonical(planned) == _canonical(scanned)
        if not isinstance(hinted, tuple):
            assert _canonical(hinted) == _canonical(scanned)
