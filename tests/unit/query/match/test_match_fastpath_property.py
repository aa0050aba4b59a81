"""Fused fast paths agree with the general path walker on documents with arrays and subdocuments.

`record` (the positional slow path) walks every path with the generic iterator and single-value
predicates, so it is an independent implementation of each leaf for this check.
"""
from bson.decimal128 import Decimal128
from bson.int64 import Int64
from hypothesis import given, settings
from hypothesis import strategies as st

from ginkgodb.query.match import compile_filter

scalars = st.one_of(
    st.integers(-2, 2), st.sampled_from([0.5, 1.0, float("nan")]),
    st.sampled_from([Int64(1), Decimal128("1"), Decimal128("1.5")]),
    st.sampled_from(["a", "b", ""]), st.booleans(), st.none(),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.sampled_from(["b", "c", "0"]), inner, max_size=2)),
    max_leaves=6,
)
documents = st.dictionaries(st.sampled_from(["a", "x"]), values, max_size=2)
operands = st.one_of(st.integers(-2, 2), st.sampled_from([0.5, 1.0, "a", "b", True, None]))
paths = st.sampled_from(["a", "a.b", "a.0", "a.b.c", "x"])
ops = st.sampled_from(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte"])


def _spec():
    single = st.builds(lambda p, o, v: {p: {o: v}}, paths, ops, operands)
    plain = st.builds(lambda p, v: {p: v}, paths, operands)
    ranged = st.builds(lambda p, lo, hi: {p: {"$gte": lo, "$lt": hi}}, paths, operands, operands)
    member = st.builds(lambda p, vs: {p: {"$in": vs}}, paths, st.lists(operands, max_size=3))
    return st.one_of(single, plain, ranged, member)


@settings(max_examples=250, deadline=None)
@given(_spec(), st.lists(documents, min_size=1, max_size=4))
def test_fast_paths_agree_with_generic_walker(spec, docs):
    matcher = compile_filter(spec)
    for doc in docs:
        assert matcher(doc) == matcher._root.record(doc, [None]), (spec, doc)
