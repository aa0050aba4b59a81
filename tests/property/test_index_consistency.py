"""After any sequence of writes, every index holds exactly the keys of the stored documents."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.engines import ENGINES, fresh_engine
from support.index_entries import assert_indexes_match_documents

from ginkgodb.commands import CommandContext, dispatch

scalars = st.one_of(st.none(), st.integers(-3, 3), st.sampled_from(["a", "b"]))
values = st.one_of(scalars, st.lists(scalars, max_size=3), st.fixed_dictionaries({"b": scalars}))
paths = st.sampled_from(["a", "a.b", "c", "d"])
updates = st.one_of(
    st.builds(lambda p, v: {"$set": {p: v}}, paths, values),
    st.builds(lambda p: {"$unset": {p: ""}}, paths),
    st.builds(lambda v: {"$push": {"c": v}}, scalars),
    st.builds(lambda v: {"$addToSet": {"c": v}}, scalars),
    st.builds(lambda v: {"$inc": {"d": v}}, st.integers(-2, 2)),
    st.builds(lambda v: {"$pull": {"c": v}}, scalars),
    st.builds(lambda v, w: {"a": v, "c": w}, values, values),  # replacement
)
ops = st.lists(st.tuples(st.integers(0, 5), updates), max_size=20)
INDEXES = [{"a": 1}, {"a.b": 1, "d": -1}, {"c": 1}, {"d": "hashed"}]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("engines")


@pytest.mark.parametrize("kind", ENGINES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops)
def test_indexes_match_documents_after_updates(kind, scratch, operations):
    with fresh_engine(kind, scratch) as engine:
        ctx = CommandContext(engine=engine)
        for i, key in enumerate(INDEXES):
            dispatch(ctx, {"createIndexes": "c", "indexes": [{"key": key, "name": f"i{i}"}], "$db": "t"})
        dispatch(ctx, {"insert": "c", "documents": [{"_id": i, "a": {"b": i}, "c": [i], "d": i} for i in range(6)],
                       "$db": "t"})
        for target, update in operations:
            reply = dispatch(ctx, {"update": "c", "updates": [{"q": {"_id": target}, "u": update}], "$db": "t"})
            assert reply["ok"] == 1.0
        assert_indexes_match_documents(engine, engine.collection("t", "c"))
