"""The shortcut planner decides once per filter shape (planner.fast.filter_shape): a plan built
from a remembered decision equals the plan a fresh decision gives, for any filter of the shape."""
from __future__ import annotations

import datetime

from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.objectid import ObjectId
from bson.regex import Regex
from hypothesis import given, settings
from hypothesis import strategies as st

from ginkgodb.engine.catalog import IndexMeta
from ginkgodb.engine.index_specs import default_index_name
from ginkgodb.planner.fast import IndexMap, fast_plan, filter_shape

scalars = st.one_of(st.integers(-3, 3), st.builds(Int64, st.integers(-3, 3)),
                    st.sampled_from([1.5, -0.0, float("inf"), float("nan")]),
                    st.sampled_from(["", "a", "b"]), st.booleans(), st.none(),
                    st.sampled_from([ObjectId(b"a" * 12), datetime.datetime(2024, 1, 1), Decimal128("1"),
                                     Regex("^a")]))
ops = st.sampled_from(["$eq", "$gt", "$gte", "$lt", "$lte", "$ne", "$in", "$exists"])
conds = st.one_of(scalars, st.dictionaries(ops, scalars, min_size=1, max_size=2),
                  st.lists(scalars, max_size=2))
fields = st.sampled_from(["a", "b", "c", "a.x", "$and"])
filters = st.dictionaries(fields, conds, min_size=1, max_size=3)
index_keys = st.sampled_from([{"a": 1}, {"a": -1, "b": 1}, {"b": 1, "a": 1}, {"c": 1, "b": 1, "a": 1},
                              {"a.x": 1}, {"c": "hashed"}, {"b": 1, "c": -1}])
index_specs = st.lists(st.tuples(index_keys, st.booleans(), st.sampled_from([(), ("a",), ("b",)])),
                       max_size=3, unique_by=lambda t: str(t[0]))


def _indexes(specs: list) -> list[IndexMeta]:
    return [IndexMeta(i + 1, default_index_name(key), key, {"unique": True} if unique else {}, set(multikey))
            for i, (key, unique, multikey) in enumerate(specs)]


def _same_shape(value, draw):
    """Another value of the same type (a NaN stays a NaN, other floats stay other floats)."""
    t = type(value)
    if t is bool:
        return draw(st.booleans())
    if t is int:
        return draw(st.integers(-3, 3))
    if t is Int64:
        return Int64(draw(st.integers(-3, 3)))
    if t is float:
        return value if value != value else draw(st.sampled_from([2.5, -1.0, float("-inf")]))
    if t is str:
        return draw(st.sampled_from(["", "z", "ab"]))
    return value


def _variant(filt: dict, draw) -> dict:
    out = {}
    for field, cond in filt.items():
        if type(cond) is dict:
            out[field] = {op: _same_shape(v, draw) for op, v in cond.items()}
        elif type(cond) is list:
            out[field] = [_same_shape(v, draw) for v in cond]
        else:
            out[field] = _same_shape(cond, draw)
    return out


@settings(max_examples=400, deadline=None)
@given(index_specs, filters, st.data())
def test_a_remembered_decision_plans_as_a_fresh_one(specs, filt, data):
    indexes = _indexes(specs)
    shared = IndexMap(indexes)
    first = fast_plan(shared, filt)
    assert first == fast_plan(IndexMap(indexes), filt)
    other = _variant(filt, data.draw)
    if filter_shape(other) is not None:
        assert filter_shape(other) == filter_shape(filt)
    assert fast_plan(shared, other) == fast_plan(IndexMap(indexes), other)


def test_a_shape_is_remembered_and_the_memory_is_bounded():
    shared = IndexMap(_indexes([({"a": 1}, False, ())]))
    fast_plan(shared, {"a": 1})
    fast_plan(shared, {"a": 2})
    fast_plan(shared, {"b": 1})
    assert len(shared.recipes) == 2
    for i in range(IndexMap.MAX_RECIPES + 10):
        fast_plan(shared, {f"f{i}": 1})
    assert len(shared.recipes) <= IndexMap.MAX_RECIPES


def test_operator_values_that_are_documents_or_arrays_are_decided_each_time():
    assert filter_shape({"a": {"$in": [1, 2]}}) is None
    assert filter_shape({"a": {"$elemMatch": {"b": 1}}}) is None
    assert filter_shape({"a": [1]}) is None
    assert filter_shape({"a": 1.5}) != filter_shape({"a": float("nan")})
