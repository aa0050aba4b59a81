"""$in and $nin: equality sets, null, arrays, regexes."""
from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.regex import Regex
from matchkit import compile_error, matches


def test_in_matches_any_listed_value():
    assert matches({"a": {"$in": [1, "x"]}}, {"a": "x"})
    assert not matches({"a": {"$in": [1, "x"]}}, {"a": 2})


def test_in_compares_numbers_across_types():
    for v in (2, 2.0, Int64(2), Decimal128("2.0")):
        assert matches({"a": {"$in": [2]}}, {"a": v})
        assert matches({"a": {"$in": [v]}}, {"a": 2})
    assert matches({"a": {"$in": [0.5]}}, {"a": Decimal128("0.5")})


def test_in_keeps_bool_and_numbers_apart():
    assert not matches({"a": {"$in": [1]}}, {"a": True})
    assert not matches({"a": {"$in": [True]}}, {"a": 1})
    assert matches({"a": {"$in": [True]}}, {"a": True})


def test_in_matches_array_elements_and_whole_arrays():
    assert matches({"a": {"$in": [3]}}, {"a": [1, 3]})
    assert matches({"a": {"$in": [[1, 3]]}}, {"a": [1, 3]})
    assert matches({"a": {"$in": [{"b": 1}]}}, {"a": [{"b": 1}]})


def test_in_with_null_matches_missing():
    assert matches({"a": {"$in": [None]}}, {})
    assert matches({"a": {"$in": [None, 1]}}, {"a": None})
    assert not matches({"a": {"$in": [1]}}, {})


def test_in_with_nan():
    nan = float("nan")
    assert matches({"a": {"$in": [nan]}}, {"a": nan})
    assert matches({"a": {"$in": [nan]}}, {"a": Decimal128("NaN")})
    assert not matches({"a": {"$in": [1]}}, {"a": nan})


def test_in_with_regex_matches_strings_and_equal_regexes():
    spec = {"a": {"$in": [Regex("^ab"), 5]}}
    assert matches(spec, {"a": "abc"})
    assert matches(spec, {"a": Regex("^ab")})
    assert not matches(spec, {"a": "cab"})


def test_empty_in_matches_nothing():
    assert not matches({"a": {"$in": []}}, {"a": 1})
    assert not matches({"a": {"$in": []}}, {})


def test_nin_is_the_negation_of_in():
    assert matches({"a": {"$nin": [1, 2]}}, {"a": 3})
    assert matches({"a": {"$nin": [1, 2]}}, {})
    assert not matches({"a": {"$nin": [1, 2]}}, {"a": [3, 2]})
    assert not matches({"a": {"$nin": [None]}}, {})


def test_in_needs_an_array():
    assert compile_error({"a": {"$in": 1}}) == (2, "$in needs an array")
    assert compile_error({"a": {"$nin": {"x": 1}}}) == (2, "$nin needs an array")


def test_in_rejects_operator_documents():
    assert compile_error({"a": {"$in": [{"$gt": 1}]}}) == (2, "cannot nest $ under $in")


def test_in_accepts_dbref_shaped_documents():
    assert matches({"a": {"$in": [{"$ref": "c", "$id": 1}]}}, {"a": {"$ref": "c", "$id": 1}})

