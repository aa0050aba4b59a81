"""Index bounds from filters: mongod's explain intervals, exactness, and byte ranges."""
from __future__ import annotations

import datetime
import math
import re

import pytest
from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.max_key import MaxKey
from bson.min_key import MinKey
from bson.objectid import ObjectId
from bson.regex import Regex

from ginkgodb.bsonutil.keycodec import encode_key, hash_value
from ginkgodb.planner.bounds import compute_bounds
from ginkgodb.query.index_keys import btree_keys as extract_keys

A = [("a", 1)]


def explain(filt, pattern=A, **kw):
    return compute_bounds(pattern, filt, **kw).to_explain()


def exact(filt, pattern=A, **kw):
    return compute_bounds(pattern, filt, **kw).exact


def in_ranges(bounds, key: bytes) -> bool:
    return any(lo <= key + b"\x00" * 8 and (hi is None or key + b"\xff" * 8 < hi)
               for lo, hi in bounds.key_ranges())


@pytest.mark.parametrize("filt,expected", [
    ({"a": 5}, ["[5, 5]"]),
    ({"a": {"$eq": 5}}, ["[5, 5]"]),
    ({"a": 5.5}, ["[5.5, 5.5]"]),
    ({"a": 5.0}, ["[5.0, 5.0]"]),
    ({"a": Int64(7)}, ["[7, 7]"]),
    ({"a": "abc"}, ['["abc", "abc"]']),
    ({"a": True}, ["[true, true]"]),
    ({"a": {}}, ["[{}, {}]"]),
    ({"a": {"b": 1}}, ["[{ b: 1 }, { b: 1 }]"]),
    ({"a": ObjectId("5f0000000000000000000001")},
     ["[ObjectId('5f0000000000000000000001'), ObjectId('5f0000000000000000000001')]"]),
    ({"a": datetime.datetime(1970, 1, 1, 0, 0, 1)}, ["[new Date(1000), new Date(1000)]"]),
    ({"a": None}, ["[null, null]"]),
    ({"a": MinKey()}, ["[MinKey, MinKey]"]),
])
def test_equality_is_a_point_interval(filt, expected):
    assert explain(filt) == {"a": expected}


def test_field_without_predicate_spans_minkey_to_maxkey():
    assert explain({}, [("a", 1), ("b", 1)]) == {"a": ["[MinKey, MaxKey]"], "b": ["[MinKey, MaxKey]"]}
    assert explain({}, [("a", -1)]) == {"a": ["[MaxKey, MinKey]"]}


def test_equality_is_exact_but_null_equality_is_not():
    assert exact({"a": 5})
    assert not exact({"a": None})


def test_equality_to_an_array_scans_the_array_and_its_first_element():
    assert explain({"a": [1, 2]}) == {"a": ["[1, 1]", "[[ 1, 2 ], [ 1, 2 ]]"]}
    assert explain({"a": []}) == {"a": ["[undefined, undefined]", "[[], []]"]}
    assert not exact({"a": [1, 2]})


@pytest.mark.parametrize("op,value,expected", [
    ("$gt", 5, "(5, inf.0]"), ("$gte", 5, "[5, inf.0]"), ("$lt", 5, "[-inf.0, 5)"),
    ("$lte", 5, "[-inf.0, 5]"), ("$lt", "m", '["", "m")'), ("$gt", "m", '("m", {})'),
    ("$gte", True, "[true, true]"), ("$lt", True, "[false, true)"),
    ("$gt", datetime.datetime(1970, 1, 1), "(new Date(0), new Date(9223372036854775807)]"),
    ("$lt", ObjectId("5f0000000000000000000000"),
     "[ObjectId('000000000000000000000000'), ObjectId('5f0000000000000000000000'))"),
    ("$gt", {"x": 1}, "({ x: 1 }, [])"),
    ("$gte", Decimal128("1.5"), "[1.5, inf.0]"),
])
def test_comparisons_are_bracketed_by_type(op, value, expected):
    assert explain({"a": {op: value}}) == {"a": [expected]}
    assert exact({"a": {op: value}})


def test_comparisons_with_nan_minkey_maxkey_and_null():
    assert explain({"a": {"$gt": math.nan}}) == {"a": []}
    assert explain({"a": {"$lte": math.nan}}) == {"a": ["[nan.0, nan.0]"]}
    assert explain({"a": {"$lt": MaxKey()}}) == {"a": ["[MinKey, MaxKey)"]}
    assert explain({"a": {"$gte": MinKey()}}) == {"a": ["[MinKey, MaxKey]"]}
    assert explain({"a": {"$gte": None}}) == {"a": ["[null, null]"]}
    assert explain({"a": {"$lt": None}}) == {"a": []}
    assert explain({"a": {"$gt": math.inf}}) == {"a": []}


def test_range_over_multikey_maxkey_is_inclusive():
    assert explain({"a": {"$lt": MaxKey()}}, multikey_paths={"a"}) == {"a": ["[MinKey, MaxKey]"]}


def test_comparison_to_an_array_is_wide_and_inexact():
    assert explain({"a": {"$gt": [1, 2]}}) == {"a": ["[1, MaxKey]"]}
    assert explain({"a": {"$lt": [1, 2]}}) == {"a": ["[MinKey, [ 1, 2 ]]"]}
    assert not exact({"a": {"$gt": [1, 2]}})


def test_two_ranges_on_one_field_intersect():
    assert explain({"a": {"$gt": 1, "$lt": 5}}) == {"a": ["(1, 5)"]}
    assert explain({"$and": [{"a": {"$gte": 1}}, {"a": {"$lte": 5}}]}) == {"a": ["[1, 5]"]}
    assert exact({"a": {"$gt": 1, "$lt": 5}})


def test_disjoint_predicates_give_empty_bounds_and_no_ranges():
    b = compute_bounds(A, {"a": {"$gt": 5, "$lt": "z"}})
    assert b.to_explain() == {"a": []} and b.key_ranges() == [] and b.exact


def test_multikey_path_keeps_one_predicate_outside_elem_match():
    b = compute_bounds(A, {"a": {"$gt": 1, "$lt": 5}}, multikey_paths={"a"})
    assert b.to_explain() == {"a": ["[-inf.0, 5)"]} and not b.exact


def test_elem_match_value_intersects_on_a_multikey_path():
    b = compute_bounds(A, {"a": {"$elemMatch": {"$gt": 1, "$lt": 5}}}, multikey_paths={"a"})
    assert b.to_explain() == {"a": ["(1, 5)"]} and not b.exact


def test_in_is_a_sorted_union_of_points():
    assert explain({"a": {"$in": [3, "x", 1, 3.0]}}) == {"a": ["[1, 1]", "[3, 3]", '["x", "x"]']}
    assert exact({"a": {"$in": [1, 2]}})
    assert not exact({"a": {"$in": [1, None]}})


def test_in_with_a_regex_adds_its_string_range():
    assert explain({"a": {"$in": [Regex("^ab"), 5]}}) == {
        "a": ["[5, 5]", '["ab", "ac")', "[/^ab/, /^ab/]"]}


def test_empty_in_matches_nothing():
    b = compute_bounds(A, {"a": {"$in": []}})
    assert b.to_explain() == {"a": []} and b.key_ranges() == []


def test_ne_and_nin_are_complements():
    assert explain({"a": {"$ne": 5}}) == {"a": ["[MinKey, 5)", "(5, MaxKey]"]}
    assert explain({"a": {"$nin": [1, 3]}}) == {"a": ["[MinKey, 1)", "(1, 3)", "(3, MaxKey]"]}
    assert explain({"a": {"$ne": None}}) == {"a": ["[MinKey, null)", "(null, MaxKey]"]}
    assert exact({"a": {"$ne": 5}}) and exact({"a": {"$ne": None}})


def test_negation_is_not_exact_on_a_multikey_path():
    assert not exact({"a": {"$ne": 5}}, multikey_paths={"a"})


def test_negation_excluding_null_below_an_array_scans_everything():
    # {a: []} keys "a.b" as null, yet {"a.b": {$ne: null}} matches it.
    assert explain({"a.b": {"$ne": None}}, [("a.b", 1)], multikey_paths={"a"}) == {"a.b": ["[MinKey, MaxKey]"]}


def test_ne_array_or_regex_cannot_use_bounds():
    assert explain({"a": {"$ne": [1]}}) == {"a": ["[MinKey, MaxKey]"]}
    assert not exact({"a": {"$nin": [Regex("x")]}})


def test_not_of_a_comparison_is_its_complement():
    assert explain({"a": {"$not": {"$gt": 5}}}) == {"a": ["[MinKey, 5]", "(inf.0, MaxKey]"]}
    assert explain({"a": {"$not": {"$exists": True}}}) == {"a": ["[null, null]"]}
    assert explain({"a": {"$not": Regex("^a")}}) == {"a": ["[MinKey, MaxKey]"]}


def test_exists():
    assert explain({"a": {"$exists": True}}) == {"a": ["[MinKey, MaxKey]"]}
    assert not exact({"a": {"$exists": True}})
    assert exact({"a": {"$exists": True}}, sparse=True)
    assert not exact({"a": {"$exists": True}}, [("a", 1), ("b", 1)], sparse=True)
    assert explain({"a": {"$exists": False}}) == {"a": ["[null, null]"]}


@pytest.mark.parametrize("spec,expected,is_exact", [
    ({"$regex": "^abc"}, ['["abc", "abd")', "[/^abc/, /^abc/]"], True),
    ({"$regex": "^abc", "$options": "i"}, ['["", {})', "[/^abc/i, /^abc/i]"], False),
    ({"$regex": "abc"}, ['["", {})', "[/abc/, /abc/]"], False),
    ({"$regex": "^ab?c"}, ['["a", "b")', "[/^ab?c/, /^ab?c/]"], False),
    ({"$regex": "^a.*"}, ['["a", "b")', "[/^a.*/, /^a.*/]"], True),
])
def test_regex_uses_its_literal_prefix(spec, expected, is_exact):
    assert explain({"a": spec}) == {"a": expected}
    assert exact({"a": spec}) is is_exact


def test_regex_literal_value_is_a_regex_predicate():
    assert explain({"a": Regex("^x")}) == {"a": ['["x", "y")', "[/^x/, /^x/]"]}
    assert explain({"a": re.compile("^x")})["a"][0] == '["", {})'  # Python patterns carry 'u'


@pytest.mark.parametrize("type_spec,expected", [
    ("string", ['["", {})']), ("number", ["[nan.0, inf.0]"]), ("bool", ["[false, true]"]),
    ("null", ["[null, null]"]), ("object", ["[{}, [])"]),
    (["int", "string"], ["[nan.0, inf.0]", '["", {})']),
    ("date", ["[new Date(-9223372036854775808), new Date(9223372036854775807)]"]),
    ("array", ["[MinKey, MaxKey]"]),
])
def test_type_is_a_bracket_range(type_spec, expected):
    assert explain({"a": {"$type": type_spec}}) == {"a": expected}


def test_type_exactness_follows_mongod():
    assert exact({"a": {"$type": "number"}}) and exact({"a": {"$type": "bool"}})
    assert not exact({"a": {"$type": "int"}}) and not exact({"a": {"$type": "null"}})


def test_mod_and_other_operators_are_not_exact():
    assert explain({"a": {"$mod": [2, 0]}}) == {"a": ["[nan.0, inf.0]"]}
    assert explain({"a": {"$size": 2}}) == {"a": ["[MinKey, MaxKey]"]}
    assert not exact({"a": {"$size": 2}})


def test_all_is_a_conjunction_of_equalities():
    assert explain({"a": {"$all": [1]}}) == {"a": ["[1, 1]"]}
    assert explain({"a": {"$all": [1, 2]}}, multikey_paths={"a"}) == {"a": ["[1, 1]"]}
    assert not exact({"a": {"$all": [1, 2]}}, multikey_paths={"a"})


def test_descending_fields_list_intervals_high_to_low():
    assert explain({"a": {"$gt": 5}}, [("a", -1)]) == {"a": ["[inf.0, 5)"]}
    assert explain({"a": {"$in": [1, 2]}}, [("a", -1)]) == {"a": ["[2, 2]", "[1, 1]"]}


def test_top_level_or_is_left_to_the_caller():
    b = compute_bounds(A, {"$or": [{"a": 1}, {"a": 2}]})
    assert b.to_explain() == {"a": ["[MinKey, MaxKey]"]} and not b.exact
    assert explain({"a": 1, "$or": [{"b": 1}]}) == {"a": ["[1, 1]"]}


def test_predicates_on_fields_outside_the_index_make_it_inexact():
    b = compute_bounds(A, {"a": 1, "z": 2})
    assert b.to_explain() == {"a": ["[1, 1]"]} and not b.exact


def test_compound_bounds_on_a_shared_array_need_an_elem_match():
    pattern = [("a.b", 1), ("a.c", 1)]
    loose = compute_bounds(pattern, {"a.b": 1, "a.c": 2}, multikey_paths={"a"})
    assert loose.to_explain() == {"a.b": ["[1, 1]"], "a.c": ["[MinKey, MaxKey]"]}
    pinned = compute_bounds(pattern, {"a": {"$elemMatch": {"b": 1, "c": 2}}}, multikey_paths={"a"})
    assert pinned.to_explain() == {"a.b": ["[1, 1]"], "a.c": ["[2, 2]"]}
    assert not pinned.exact


def test_hashed_field_takes_the_hash_of_equalities():
    h = hash_value(5)
    assert explain({"a": 5}, [("a", "hashed")]) == {"a": [f"[{h}, {h}]"]}
    assert not exact({"a": 5}, [("a", "hashed")])
    assert explain({"a": {"$gt": 5}}, [("a", "hashed")]) == {"a": ["[MinKey, MaxKey]"]}


def test_planner_helpers_describe_each_field():
    b = compute_bounds([("a", 1), ("b", 1), ("c", 1)], {"a": 1, "b": {"$in": [1, 2]}})
    assert b.is_single_point(0) and b.is_point(1) and not b.is_single_point(1)
    assert b.is_full(2) and b.admits_null(2) and not b.admits_null(0)


# ---------------------------------------------------------------- byte ranges

def _key(values, directions):
    return encode_key(values, directions)


def test_point_prefix_expands_as_cartesian_product_then_one_range():
    pattern = [("a", 1), ("b", -1), ("c", 1)]
    b = compute_bounds(pattern, {"a": {"$in": [1, 2]}, "b": {"$in": ["x", "y"]}, "c": {"$gt": 3}})
    ranges = b.key_ranges()
    assert len(ranges) == 4 and b.exact
    assert ranges == sorted(ranges)
    assert all(hi is not None and lo < hi for lo, hi in ranges)
    assert all(r1[1] <= r2[0] for r1, r2 in zip(ranges, ranges[1:]))
    dirs = [1, -1, 1]
    assert in_ranges(b, _key([2, "x", 4], dirs))
    assert not in_ranges(b, _key([2, "x", 3], dirs))
    assert not in_ranges(b, _key([3, "x", 4], dirs))


def test_fields_after_the_range_field_are_unbounded_and_inexact():
    pattern = [("a", 1), ("b", 1)]
    b = compute_bounds(pattern, {"a": {"$gt": 1}, "b": 5})
    assert len(b.key_ranges()) == 1 and not b.exact
    assert in_ranges(b, _key([2, 6], [1, 1]))  # b is re-checked later


def test_product_is_capped_with_a_covering_range():
    pattern = [("a", 1), ("b", 1)]
    b = compute_bounds(pattern, {"a": {"$in": list(range(30))}, "b": {"$in": list(range(30))}})
    assert len(b.key_ranges()) <= 200 and not b.exact
    assert in_ranges(b, _key([29, 0], [1, 1])) and in_ranges(b, _key([0, 29], [1, 1]))


def test_exclusive_bounds_skip_equal_keys_with_any_suffix():
    pattern = [("a", 1), ("b", 1)]
    b = compute_bounds(pattern, {"a": {"$gt": 5}})
    assert not in_ranges(b, _key([5, "zzz"], [1, 1]))
    assert in_ranges(b, _key([5.5, None], [1, 1]))


def test_descending_range_covers_its_keys():
    b = compute_bounds([("a", -1)], {"a": {"$gte": 2, "$lt": 4}})
    assert in_ranges(b, _key([2], [-1])) and in_ranges(b, _key([3.9], [-1]))
    assert not in_ranges(b, _key([4], [-1])) and not in_ranges(b, _key([1], [-1]))


def test_ranges_cover_the_keys_extract_keys_produces():
    pattern = [("a", 1), ("b", -1)]
    doc = {"a": "k", "b": [3, 9]}
    keys, multikey = extract_keys(doc, pattern)
    b = compute_bounds(pattern, {"a": "k", "b": {"$gt": 5}}, multikey_paths=multikey)
    assert [in_ranges(b, k) for k in keys].count(True) == 1


# ---------------------------------------------------------------- soundness property

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from ginkgodb.bsonutil import types as T  # noqa: E402
from ginkgodb.bsonutil.compare import compare  # noqa: E402

SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([math.nan, math.inf, -math.inf, 0.5, -0.0]),
    st.sampled_from([Int64(2), Decimal128("1.5"), Decimal128("NaN")]), st.sampled_from(["", "a", "ab", "b"]),
    st.sampled_from([datetime.datetime(2000, 1, 1), ObjectId("5f0000000000000000000001"), {}, {"x": 1}]),
)
FIELDS = ["a", "b", "c"]
DOCS = st.fixed_dictionaries({}, optional={f: SCALARS for f in FIELDS})
CONDITION = st.one_of(
    SCALARS,
    st.builds(lambda op, v: {op: v}, st.sampled_from(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte"]), SCALARS),
    st.builds(lambda a, b: {"$gt": a, "$lte": b}, SCALARS, SCALARS),
    st.builds(lambda vs: {"$in": vs}, st.lists(SCALARS, max_size=3)),
    st.builds(lambda vs: {"$nin": vs}, st.lists(SCALARS, max_size=2)),
    st.builds(lambda b: {"$exists": b}, st.booleans()),
    st.builds(lambda op, v: {"$not": {op: v}}, st.sampled_from(["$gt", "$lte", "$eq"]), SCALARS),
)
FILTERS = st.dictionaries(st.sampled_from(FIELDS + ["z"]), CONDITION, max_size=3)
PATTERNS = st.lists(st.tuples(st.sampled_from(FIELDS), st.sampled_from([1, -1])), min_size=1, max_size=3,
                    unique_by=lambda t: t[0])


def _eq(present: bool, v, arg) -> bool:
    if arg is None:
        return not present or v is None
    return present and compare(v, arg) == 0


def _cmp(present: bool, v, op: str, arg) -> bool:
    if arg is None:
        return op in ("$gte", "$lte") and _eq(present, v, None)
    if not present or T.bracket(v) != T.bracket(arg):
        return False
    if T.is_nan(v) or T.is_nan(arg):  # NaN only equals NaN
        return op in ("$gte", "$lte") and T.is_nan(v) and T.is_nan(arg)
    c = compare(v, arg)
    return {"$gt": c > 0, "$gte": c >= 0, "$lt": c < 0, "$lte": c <= 0}[op]


def _op(present: bool, v, op: str, arg) -> bool:
    if op == "$eq":
        return _eq(present, v, arg)
    if op == "$ne":
        return not _eq(present, v, arg)
    if op == "$in":
        return any(_eq(present, v, x) for x in arg)
    if op == "$nin":
        return not any(_eq(present, v, x) for x in arg)
    if op == "$exists":
        return present == arg
    if op == "$not":
        (inner, x), = arg.items()
        return not _op(present, v, inner, x)
    return _cmp(present, v, op, arg)


def matches(doc: dict, filt: dict) -> bool:
    """MongoDB's semantics for these operators over scalar fields (the test's oracle)."""
    for field, cond in filt.items():
        present, v = field in doc, doc.get(field)
        ops = cond.items() if isinstance(cond, dict) and cond and next(iter(cond)).startswith("$") else [("$eq", cond)]
        if not all(_op(present, v, op, arg) for op, arg in ops):
            return False
    return True


@settings(max_examples=400, deadline=None)
@given(st.lists(DOCS, max_size=12), FILTERS, PATTERNS)
def test_every_matching_document_has_a_key_inside_the_ranges(docs, filt, pattern):
    bounds = compute_bounds(pattern, filt)
    for doc in docs:
        (key,), _ = extract_keys(doc, pattern)
        if matches(doc, filt):
            assert in_ranges(bounds, key), (doc, bounds)
        elif bounds.exact:
            assert not in_ranges(bounds, key), (doc, bounds)  # exact: no re-check needed
