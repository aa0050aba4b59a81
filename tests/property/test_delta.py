"""The `$v: 2` diff: applying diff(before, after) to before gives after, byte for byte."""
from __future__ import annotations

import bson
import bson.errors
from bson.codec_options import CodecOptions, DatetimeConversion
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ginkgodb.bsonutil.delta import apply_diff, compute_diff, compute_diff_decoded
from ginkgodb.bsonutil.types import Undefined
from tests.strategies import FIELD_NAMES
from tests.strategies import SCALARS as ANY_SCALARS

SCALARS = ANY_SCALARS.filter(lambda v: not isinstance(v, Undefined))  # not encodable by itself

OPTS = CodecOptions(datetime_conversion=DatetimeConversion.DATETIME_AUTO)
NAMES = st.sampled_from(["a", "b", "c", "1", "x.y", "", "d", "s", "u"]) | FIELD_NAMES


def values(depth: int = 2) -> st.SearchStrategy:
    if depth == 0:
        return SCALARS
    inner = values(depth - 1)
    return st.one_of(SCALARS, st.dictionaries(NAMES, inner, max_size=4),
                     st.lists(inner, max_size=5))


documents = st.dictionaries(NAMES, values(), max_size=6)


@st.composite
def mutated(draw, value):
    """`value` changed a little: fields set, removed, moved to the end; arrays grown or cut;
    changes inside sub-documents and elements."""
    if isinstance(value, dict):
        out = dict(value)
        for _ in range(draw(st.integers(0, 3))):
            action = draw(st.sampled_from(["set", "unset", "move", "inner"]))
            keys = list(out)
            if action == "set" or not keys:
                out[draw(NAMES)] = draw(values(1))
            elif action == "unset":
                del out[draw(st.sampled_from(keys))]
            elif action == "move":
                key = draw(st.sampled_from(keys))
                out[key] = out.pop(key)
            else:
                key = draw(st.sampled_from(keys))
                out[key] = draw(mutated(out[key]))
        return out
    if isinstance(value, list):
        out = list(value)
        action = draw(st.sampled_from(["grow", "cut", "inner", "same"]))
        if action == "grow":
            out += draw(st.lists(values(1), min_size=1, max_size=3))
        elif action == "cut" and out:
            del out[draw(st.integers(0, len(out) - 1)):]
        elif action == "inner" and out:
            i = draw(st.integers(0, len(out) - 1))
            out[i] = draw(mutated(out[i]))
        return out
    return draw(st.one_of(st.just(value), values(1)))


def check(before: dict, after: dict, ignore: bool) -> None:
    try:
        pre, post = bson.encode(before), bson.encode(after)
    except bson.errors.InvalidDocument:   # e.g. a regex with a NUL: not a BSON document at all
        assume(False)
    assume(bson.encode(bson.decode(post, OPTS)) == post)
    diff = compute_diff(pre, post, ignore_size_limit=ignore)
    # the writer's path over decoded images gives the same bytes
    old, new = bson.decode(pre, OPTS), bson.decode(post, OPTS)
    if bson.encode(old) == pre:
        assert compute_diff_decoded(old, new, post, ignore_size_limit=ignore) == diff
    if diff is None:  # a pipeline update whose diff is not worth it: logged as the document
        assert not ignore
        return
    applied = apply_diff(bson.decode(pre, OPTS), bson.decode(diff, OPTS))
    assert bson.encode(applied) == post
    # idempotent: applying twice changes nothing more
    assert bson.encode(apply_diff(applied, bson.decode(diff, OPTS))) == post


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.booleans())
def test_diff_of_a_change_applies_back(data, ignore):
    before = data.draw(documents)
    check(before, data.draw(mutated(before)), ignore)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(documents, documents, st.booleans())
def test_diff_of_any_two_documents_applies_back(before, after, ignore):
    check(before, after, ignore)


def test_a_change_inside_a_dbref_applies_back():
    """Found by the property test above: the diff of a DBRef's own fields decodes as a DBRef."""
    from bson.dbref import DBRef
    check({"a": 0, "b": DBRef("0", 1)}, {"b": DBRef("", 0)}, False)
    check({"a": 0, "b": DBRef("0", 1)}, {"b": DBRef("", 0)}, True)


@st.composite
def fields_set(draw, before):
    """`before` with some of its fields given new values in place (what $set/$inc of existing
    fields make): the same names in the same order."""
    out = dict(before)
    for key in draw(st.lists(st.sampled_from(list(out)), max_size=3)) if out else ():
        out[key] = draw(st.one_of(values(1), mutated(out[key])))
    return out


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.booleans())
def test_diff_of_fields_set_in_place_applies_back(data, ignore):
    """The writer's shortcut for fields changed in place (a `u` of the changed fields) gives the
    bytes of the walk over the raw images."""
    before = data.draw(documents)
    check(before, data.draw(fields_set(before)), ignore)


def test_fields_set_in_place_keep_their_order_and_id():
    from bson.dbref import DBRef
    for before, after in [({"_id": 1, "b": 1}, {"_id": 1, "b": 2}),
                          ({"a": 1, "_id": 2, "c": 3}, {"a": 5, "_id": 2.0, "c": 3}),
                          ({"a": -0.0}, {"a": 0.0}), ({"a": [1]}, {"a": {"x": 1}}),
                          ({"a": DBRef("c", 1)}, {"a": DBRef("c", 2)}), ({"a": 1}, {"a": 1}),
                          # fields added at the end: an `i` after the `u`, before the `s`
                          ({"a": 1, "l": [1]}, {"a": 2, "l": [1, 2], "b": {"x": [1]}, "c": None}),
                          ({"_id": 1}, {"_id": 1, "hits": 1, "log": [0]})]:
        check(before, after, True)
        check(before, after, False)


@st.composite
def pushed(draw, before):
    """`before` with some of its array fields grown at the end and maybe other fields set in place
    (what `$push` with `$inc`/`$set` of existing fields makes)."""
    out = dict(before)
    for key, value in before.items():
        if isinstance(value, list) and draw(st.booleans()):
            out[key] = value + draw(st.lists(values(1), min_size=1, max_size=3))
        elif draw(st.integers(0, 3)) == 0:
            out[key] = draw(values(1))
    return out


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.booleans())
def test_diff_of_arrays_grown_at_the_end_applies_back(data, ignore):
    """The writer's shortcut for arrays that grew at the end (an `s<f>` of `u<i>` entries) gives
    the bytes of the walk over the raw images."""
    before = data.draw(st.dictionaries(NAMES, st.one_of(values(), st.lists(values(1), max_size=4)), max_size=6))
    check(before, data.draw(pushed(before)), ignore)


def test_the_first_inc_and_push_of_a_document_add_its_fields():
    """What W8 does to each document the first time: the fields are added (an `i`)."""
    before = {"_id": 1, "sku": "a", "n": 3}
    after = {**before, "hits": 1, "log": [7]}
    for touched in (None, frozenset({"hits", "log"})):
        diff = compute_diff_decoded(before, after, bson.encode(after), touched=touched)
        assert diff == compute_diff(bson.encode(before), bson.encode(after))
        assert bson.decode(diff) == {"i": {"hits": 1, "log": [7]}}


def test_a_push_with_an_inc_is_one_u_and_one_array_diff():
    before = {"_id": 1, "hits": 1, "log": [0, {"a": 1}], "tags": ["x"]}
    after = {"_id": 1, "hits": 2, "log": [0, {"a": 1}, 7, [1]], "tags": ["x"]}
    check(before, after, True)
    diff = compute_diff_decoded(before, after, bson.encode(after))
    assert bson.decode(diff) == {"u": {"hits": 2}, "slog": {"a": True, "u2": 7, "u3": [1]}}
    # the same with the old image's elements decoded apart (not the same objects)
    assert compute_diff_decoded(bson.decode(bson.encode(before)), after, bson.encode(after)) == diff


# -- the update plan's touched fields ---------------------------------------------------------
OPERATOR_FIELDS = st.sampled_from(["a", "b", "c", "n", "tags", "a.x", "b.0", "c.y.z", "tags.1"])


@st.composite
def operator_updates(draw):
    """An operator update over a few paths (each path once, as mongod requires)."""
    paths = draw(st.lists(OPERATOR_FIELDS, min_size=1, max_size=3, unique_by=lambda p: p.split(".")[0]))
    spec: dict = {}
    for path in paths:
        op = draw(st.sampled_from(["$set", "$inc", "$push", "$unset", "$max", "$addToSet", "$pop"]))
        value = {"$inc": draw(st.integers(-3, 3)), "$pop": draw(st.sampled_from([1, -1])),
                 "$unset": ""}.get(op, draw(values(1)))
        spec.setdefault(op, {})[path] = value
    return spec


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.booleans())
def test_diff_of_the_touched_fields_equals_the_walk(data, ignore):
    """An operator update's plan names the top-level fields it may change; the diff made from
    those alone equals the walk over the raw images (and applies back)."""
    from ginkgodb.errors import CommandError
    from ginkgodb.query.update.plan import compile_update

    before = data.draw(st.dictionaries(st.sampled_from(["_id", "a", "b", "c", "n", "tags", "z"]),
                                       st.one_of(values(), st.lists(values(1), max_size=4)), max_size=6))
    try:
        pre = bson.encode(before)
    except bson.errors.InvalidDocument:
        assume(False)
    old = bson.decode(pre, OPTS)
    assume(bson.encode(old) == pre)
    try:
        plan = compile_update(data.draw(operator_updates()))
        new = plan.apply(old)
    except CommandError:   # e.g. $inc of a string, a path through a scalar: no write
        assume(False)
    assert plan.top_fields is not None
    try:
        post = bson.encode(new)
    except bson.errors.InvalidDocument:
        assume(False)
    expected = compute_diff(pre, post, ignore_size_limit=ignore)
    assert compute_diff_decoded(old, new, post, ignore_size_limit=ignore, touched=plan.top_fields) == expected


def test_renames_and_replacements_name_no_touched_fields():
    from ginkgodb.query.update.plan import compile_update
    assert compile_update({"$rename": {"a": "b"}}).top_fields is None
    assert compile_update({"x": 1}).top_fields is None
    assert compile_update([{"$set": {"a": 1}}]).top_fields is None
    assert compile_update({"$inc": {"n": 1}, "$push": {"tags.x": 2}}).top_fields == {"n", "tags"}
