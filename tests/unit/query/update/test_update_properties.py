"""Properties of operator updates over generated documents."""
from __future__ import annotations

import copy

import bson
from hypothesis import given, settings
from hypothesis import strategies as st

from ginkgodb.bsonutil.compare import values_equal
from ginkgodb.errors import CommandError
from ginkgodb.query.update import compile_update

names = st.sampled_from(["a", "b", "c", "x"])
scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**31, 2**31 - 1),
                    st.floats(allow_nan=False), st.text(max_size=3))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(names, inner, max_size=3)), max_leaves=8)
documents = st.dictionaries(names, values, max_size=4).map(lambda d: {"_id": 1, **d})
paths = st.lists(names, min_size=1, max_size=3).map(".".join)


def read(doc, path):
    current = doc
    for part in path.split("."):
        current = current[part]
    return current


def viable(doc, path):
    """True when every existing prefix of `path` is a document (so $set can reach it)."""
    current = doc
    for part in path.split(".")[:-1]:
        if part not in current:
            return True
        current = current[part]
        if not isinstance(current, dict):
            return False
    return True


@settings(max_examples=60, deadline=None)
@given(documents, paths, values)
def test_set_then_read_gives_the_value(doc, path, value):
    if not viable(doc, path):
        return
    out = compile_update({"$set": {path: value}}).apply(doc)
    assert values_equal(read(out, path), value)


@settings(max_examples=60, deadline=None)
@given(documents, paths, values)
def test_apply_never_mutates_its_input_and_gives_encodable_output(doc, path, value):
    before = bson.encode(doc)
    snapshot = copy.deepcopy(doc)
    try:
        out = compile_update({"$set": {path: value}, "$unset": {"zz": 1}}).apply(doc)
    except CommandError:
        out = None
    assert bson.encode(doc) == before and doc == snapshot
    if out is not None:
        bson.encode(out)


@settings(max_examples=60, deadline=None)
@given(documents, paths, values)
def test_second_identical_set_is_a_no_op(doc, path, value):
    if not viable(doc, path):
        return
    plan = compile_update({"$set": {path: value}})
    once = plan.apply(doc)
    assert plan.apply(once) is once


@settings(max_examples=60, deadline=None)
@given(st.integers(-2**40, 2**40), st.integers(-2**31, 2**31 - 1), st.integers(-2**31, 2**31 - 1))
def test_inc_composes_additively(start, x, y):
    doc = {"_id": 1, "n": start}
    twice = compile_update({"$inc": {"n": y}}).apply(compile_update({"$inc": {"n": x}}).apply(doc))
    once = compile_update({"$inc": {"n": x + y}}).apply(doc) if -2**63 <= x + y < 2**63 else None
    assert twice["n"] == start + x + y
    if once is not None:
        assert once["n"] == twice["n"]
