"""The bytes test a compiled filter carries (query/match/raw_prefilter.py) never rejects a
document the filter matches, over random documents and filters of strings, ObjectIds, dates,
booleans, numbers of every BSON type (int32, int64, double, decimal128, both zeros, the edges
of the exact doubles), arrays and embedded documents."""
from __future__ import annotations

import datetime

import bson
from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.objectid import ObjectId
from hypothesis import given, settings
from hypothesis import strategies as st

from ginkgodb.query.match import compile_filter

OIDS = [ObjectId(f"{i:024x}") for i in range(3)]
DATES = [datetime.datetime(2024, 1, 1) + datetime.timedelta(milliseconds=i) for i in range(3)]
#: numbers that compare equal across types, and the edges where a double stops being exact
EDGES = [2**53, 2**53 + 1, -2**31, 2**31, 2**63 - 1, float(2**53), float(2**63), float("inf"), float("-inf"), -0.0, 0.0,
         float("nan")]
ZEROS = [0, 0.0, -0.0, Int64(0), Decimal128("0"), Decimal128("-0.00")]
numbers = st.one_of(st.integers(-2, 2), st.sampled_from(ZEROS), st.floats(-2, 2, allow_nan=False), st.sampled_from(EDGES),
                    st.builds(Int64, st.integers(-2, 2)), st.sampled_from([Int64(2**53 + 1), Int64(-2**63)]),
                    st.sampled_from([Decimal128("1"), Decimal128("1.0"), Decimal128("-0"), Decimal128("2E+0"),
                                     Decimal128("9007199254740993")]))
scalars = st.one_of(st.none(), numbers,
                    st.sampled_from(["", "a", "ab", "é", "a\x00b", "b"]), st.sampled_from(OIDS),
                    st.sampled_from(DATES), st.booleans())
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.sampled_from(["x", "y"]), inner,
                                                                       max_size=2)), max_leaves=6)
documents = st.fixed_dictionaries({}, optional={"a": values, "b": values, "c": scalars})

field_cond = st.one_of(
    scalars,
    st.builds(lambda v: {"$eq": v}, scalars),
    st.builds(lambda vs: {"$in": vs}, st.lists(scalars, max_size=3)),
    st.builds(lambda vs: {"$all": vs}, st.lists(scalars, min_size=1, max_size=2)),
    st.builds(lambda v: {"$elemMatch": {"$eq": v}}, scalars),
    st.builds(lambda v: {"$elemMatch": {"x": v}}, scalars),
    st.builds(lambda v: {"$ne": v}, scalars),
    st.builds(lambda op, v: {op: v}, st.sampled_from(["$gt", "$gte", "$lt", "$lte"]), scalars),
    st.builds(lambda v, w: {"$gt": v, "$lt": w}, scalars, scalars),
    st.builds(lambda v: {"$elemMatch": {"$gte": v}}, scalars),
    st.builds(lambda v: {"$exists": v}, st.sampled_from([True, False, 1, 0, 0.5])),
    st.builds(lambda v: {"$not": {"$eq": v}}, scalars),
    st.builds(lambda d: d, st.dictionaries(st.sampled_from(["x", "y"]), scalars, min_size=1, max_size=2)),
)
paths = st.sampled_from(["a", "b", "c", "a.x", "a.0", "b.y.x", "x"])
simple = st.dictionaries(paths, field_cond, min_size=1, max_size=2)
filters = st.recursive(simple, lambda inner: st.one_of(
    st.builds(lambda xs: {"$or": xs}, st.lists(inner, min_size=1, max_size=3)),
    st.builds(lambda xs: {"$and": xs}, st.lists(inner, min_size=1, max_size=3)),
    st.builds(lambda xs: {"$nor": xs}, st.lists(inner, min_size=1, max_size=2)),
), max_leaves=4)


@settings(max_examples=2000, deadline=None)
@given(documents, filters)
def test_the_bytes_test_never_rejects_a_match(doc, filt):
    raw = bson.encode(doc)
    matcher = compile_filter(filt)
    if matcher.raw_prefilter is not None and matcher(bson.decode(raw)):
        assert matcher.raw_prefilter(raw), (doc, filt)


@settings(max_examples=1500, deadline=None)
@given(numbers, numbers, st.sampled_from(["plain", "array", "nested", "nested array"]),
       st.sampled_from(["eq", "$eq", "$in", "$elemMatch", "$gt", "$gte", "$lt", "$lte", "range"]))
def test_a_number_equal_across_types_is_never_rejected(stored, wanted, where, how):
    """A number stored in any BSON type, found by an equality or a range on a number of any
    type: the test passes whenever the filter matches (often here: both sides draw from few
    values, and the edges of exactness)."""
    doc = {"plain": {"a": stored}, "array": {"a": [7, stored]}, "nested": {"d": {"a": stored}},
           "nested array": {"d": [{"a": stored}]}}[where]
    path = "d.a" if where.startswith("nested") else "a"
    cond = {"eq": wanted, "$eq": {"$eq": wanted}, "$in": {"$in": [wanted, 99]},
            "$elemMatch": {"$elemMatch": {"$eq": wanted}}, "$gt": {"$gt": wanted}, "$gte": {"$gte": wanted},
            "$lt": {"$lt": wanted}, "$lte": {"$lte": wanted}, "range": {"$gte": wanted, "$lt": 3}}[how]
    raw = bson.encode(doc)
    matcher = compile_filter({path: cond})
    if matcher(bson.decode(raw)):
        assert matcher.raw_prefilter is None or matcher.raw_prefilter(raw), (doc, path, cond)


DAYS = [datetime.datetime(2024, 1, 1) + datetime.timedelta(milliseconds=m) for m in (-1, 0, 1, 10**9)] + [
    datetime.datetime(1960, 5, 5), datetime.datetime(1970, 1, 1)]


@settings(max_examples=600, deadline=None)
@given(st.sampled_from(DAYS), st.sampled_from(DAYS + [5, "x"]), st.sampled_from(["$gt", "$gte", "$lt", "$lte"]),
       st.booleans())
def test_a_date_range_is_never_rejected(stored, bound, op, in_array):
    doc = {"a": [stored] if in_array else stored}
    raw = bson.encode(doc)
    matcher = compile_filter({"a": {op: bound}})
    if matcher(bson.decode(raw)):
        assert matcher.raw_prefilter is None or matcher.raw_prefilter(raw), (doc, op, bound)


WORDS = ["", "a", "ab", "abc", "b", "ba", "é", "\uffff", "a\x00b", "z"]


@settings(max_examples=800, deadline=None)
@given(st.sampled_from(WORDS), st.sampled_from(WORDS), st.sampled_from(["$gt", "$gte", "$lt", "$lte"]),
       st.sampled_from(["plain", "array", "nested"]))
def test_a_string_range_is_never_rejected(stored, bound, op, where):
    doc = {"plain": {"a": stored}, "array": {"a": ["zz", stored]}, "nested": {"d": {"a": stored}}}[where]
    raw = bson.encode(doc)
    matcher = compile_filter({"d.a" if where == "nested" else "a": {op: bound}})
    if matcher(bson.decode(raw)):
        assert matcher.raw_prefilter is None or matcher.raw_prefilter(raw), (doc, op, bound)
