"""The compiled matcher agrees with a deliberately simple evaluator on scalar documents.

The reference below is written from the documented rules (type brackets, null matches missing,
$not negates), not from the compiler's code, for $eq/$gt/$lt/$in/$and/$or/$not.
"""
from hypothesis import given, settings
from hypothesis import strategies as st

from ginkgodb.query.match import compile_filter

FIELDS = ("a", "b", "c")
MISSING = object()

scalars = st.one_of(
    st.integers(-3, 3),
    st.floats(-3, 3, allow_nan=False).map(lambda f: round(f * 2) / 2),
    st.text(alphabet="ab", max_size=2),
    st.booleans(),
    st.none(),
)
documents = st.dictionaries(st.sampled_from(FIELDS), scalars)


def _condition():
    op = st.sampled_from(["$eq", "$gt", "$lt"])
    single = st.builds(lambda o, v: {o: v}, op, scalars)
    membership = st.builds(lambda vs: {"$in": vs}, st.lists(scalars, max_size=3))
    negated = st.builds(lambda c: {"$not": c}, st.one_of(single, membership))
    return st.one_of(scalars, single, membership, negated)


leaf_filters = st.dictionaries(st.sampled_from(FIELDS), _condition(), min_size=1, max_size=2)
filters = st.recursive(
    leaf_filters,
    lambda inner: st.one_of(
        st.builds(lambda xs: {"$and": xs}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda xs: {"$or": xs}, st.lists(inner, min_size=1, max_size=3)),
    ),
    max_leaves=6,
)


def _bracket(v):
    if v is None or v is MISSING:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    return "string"


def _eq(v, rhs):
    if rhs is None:
        return v is None or v is MISSING
    return _bracket(v) == _bracket(rhs) and v == rhs


def _ordered(v, op, rhs):
    if rhs is None or v is MISSING or v is None or _bracket(v) != _bracket(rhs):
        return False
    return v > rhs if op == "$gt" else v < rhs


def _holds(v, condition):
    if not (isinstance(condition, dict) and condition):
        return _eq(v, condition)
    (op, arg), = condition.items()
    if op == "$eq":
        return _eq(v, arg)
    if op == "$in":
        return any(_eq(v, x) for x in arg)
    if op == "$not":
        return not _holds(v, arg)
    return _ordered(v, op, arg)


def reference(spec, doc):
    for key, value in spec.items():
        if key == "$and":
            ok = all(reference(s, doc) for s in value)
        elif key == "$or":
            ok = any(reference(s, doc) for s in value)
        else:
            ok = _holds(doc.get(key, MISSING), value)
        if not ok:
            return False
    return True


@settings(max_examples=200, deadline=None)
@given(filters, st.lists(documents, min_size=1, max_size=5))
def test_compiled_matcher_agrees_with_reference(spec, docs):
    matcher = compile_filter(spec)
    for doc in docs:
        assert matcher(doc) == reference(spec, doc), (spec, doc)
