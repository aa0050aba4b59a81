"""$eq/$ne/$gt/$gte/$lt/$lte: type brackets, null, NaN, MinKey/MaxKey, arrays and documents."""
import datetime
import math

import pytest
from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.max_key import MaxKey
from bson.min_key import MinKey
from bson.objectid import ObjectId
from bson.regex import Regex
from matchkit import matches

from ginkgodb.errors import CommandError
from ginkgodb.query.match import compile_filter


def test_equality_to_scalar_matches_equal_value():
    assert matches({"a": 5}, {"a": 5})
    assert not matches({"a": 5}, {"a": 6})


def test_equality_matches_across_numeric_types():
    for v in (5, 5.0, Int64(5), Decimal128("5"), Decimal128("5.00")):
        assert matches({"a": 5}, {"a": v}), v
        assert matches({"a": v}, {"a": 5}), v


def test_equality_never_crosses_type_brackets():
    assert not matches({"a": 1}, {"a": True})
    assert not matches({"a": True}, {"a": 1})
    assert not matches({"a": 5}, {"a": "5"})
    assert not matches({"a": "5"}, {"a": 5})


def test_equality_to_scalar_matches_array_element():
    assert matches({"a": 5}, {"a": [1, 5]})
    assert not matches({"a": 5}, {"a": [1, 6]})


def test_equality_to_array_matches_whole_array_or_nested_element():
    assert matches({"a": [1, 5]}, {"a": [1, 5]})
    assert matches({"a": [1, 5]}, {"a": [0, [1, 5]]})
    assert not matches({"a": [1, 5]}, {"a": [5, 1]})
    assert not matches({"a": [1, 5]}, {"a": 1})


def test_equality_to_document_respects_field_order():
    assert matches({"a": {"x": 1, "y": 2}}, {"a": {"x": 1, "y": 2}})
    assert not matches({"a": {"x": 1, "y": 2}}, {"a": {"y": 2, "x": 1}})
    assert matches({"a": {"x": 1}}, {"a": [{"x": 1}, 2]})


def test_null_matches_missing_and_null_but_not_empty_array():
    assert matches({"a": None}, {})
    assert matches({"a": None}, {"a": None})
    assert matches({"a": None}, {"a": [1, None]})
    assert not matches({"a": None}, {"a": []})
    assert not matches({"a": None}, {"a": 0})


def test_ne_null_requires_a_non_null_value():
    assert matches({"a": {"$ne": None}}, {"a": 0})
    assert not matches({"a": {"$ne": None}}, {})
    assert not matches({"a": {"$ne": None}}, {"a": None})


def test_ne_is_negation_of_equality_over_array():
    assert not matches({"a": {"$ne": 5}}, {"a": [5, 6]})
    assert matches({"a": {"$ne": 5}}, {"a": [6, 7]})
    assert matches({"a": {"$ne": 5}}, {})


def test_gte_and_lte_null_match_missing_but_gt_lt_do_not():
    assert matches({"a": {"$gte": None}}, {})
    assert matches({"a": {"$lte": None}}, {"a": None})
    assert not matches({"a": {"$gt": None}}, {})
    assert not matches({"a": {"$lt": None}}, {"a": None})


def test_gt_never_matches_other_brackets():
    assert not matches({"a": {"$gt": 5}}, {"a": "z"})
    assert not matches({"a": {"$lt": "a"}}, {"a": 1})
    assert not matches({"a": {"$gt": 5}}, {})


def test_gt_compares_numbers_of_different_types_exactly():
    assert matches({"a": {"$gt": 5}}, {"a": 5.5})
    assert matches({"a": {"$gt": 2**53}}, {"a": 2**53 + 1})
    assert not matches({"a": {"$gt": 2**53}}, {"a": float(2**53)})
    assert matches({"a": {"$lt": Decimal128("0.1")}}, {"a": 0.0999})
    assert matches({"a": {"$gte": Decimal128("2.5")}}, {"a": Decimal128("2.50")})


def test_range_conditions_may_be_satisfied_by_different_elements():
    assert matches({"a": {"$gt": 1, "$lt": 3}}, {"a": [0, 5]})
    assert not matches({"a": {"$gt": 1, "$lt": 3}}, {"a": [0, 0]})


def test_string_order_is_code_point_order():
    assert matches({"a": {"$gt": "Z"}}, {"a": "a"})
    assert matches({"a": {"$gt": "\uffff"}}, {"a": "\U0001F600"})
    assert not matches({"a": {"$lt": "abc"}}, {"a": "abd"})


def test_nan_equals_nan_but_is_unordered():
    nan = float("nan")
    assert matches({"a": nan}, {"a": nan})
    assert matches({"a": nan}, {"a": Decimal128("NaN")})
    assert not matches({"a": {"$gt": nan}}, {"a": 1})
    assert not matches({"a": {"$lt": 1}}, {"a": nan})
    assert matches({"a": {"$gte": nan}}, {"a": nan})
    assert not matches({"a": {"$gt": nan}}, {"a": nan})


def test_minkey_and_maxkey_operands_match_every_other_value():
    assert matches({"a": {"$gt": MinKey()}}, {"a": "x"})
    assert matches({"a": {"$gt": MinKey()}}, {})
    assert not matches({"a": {"$gt": MinKey()}}, {"a": MinKey()})
    assert matches({"a": {"$gte": MinKey()}}, {"a": MinKey()})
    assert matches({"a": {"$lt": MaxKey()}}, {"a": None})
    assert not matches({"a": {"$lt": MinKey()}}, {"a": 1})
    assert not matches({"a": MaxKey()}, {"a": 1})


def test_dates_objectids_and_booleans_compare_within_their_bracket():
    d = datetime.datetime(2020, 1, 1)
    assert matches({"a": {"$gt": d}}, {"a": datetime.datetime(2021, 1, 1)})
    assert not matches({"a": {"$gt": d}}, {"a": 10**15})
    aware = datetime.datetime(2020, 1, 1, 1, tzinfo=datetime.timezone(datetime.timedelta(hours=1)))
    assert matches({"a": aware}, {"a": d})
    o1, o2 = ObjectId("000000000000000000000001"), ObjectId("000000000000000000000002")
    assert matches({"a": {"$lt": o2}}, {"a": o1})
    assert matches({"a": {"$gt": False}}, {"a": True})


def test_eq_with_regex_operand_matches_only_equal_regex():
    assert matches({"a": {"$eq": Regex("x", "i")}}, {"a": Regex("x", "i")})
    assert not matches({"a": {"$eq": Regex("x")}}, {"a": "x"})


def test_regex_operand_is_rejected_for_ordering_and_ne():
    with pytest.raises(CommandError) as e:
        compile_filter({"a": {"$gt": Regex("x")}})
    assert (e.value.code, e.value.errmsg) == (2, "Can't have RegEx as arg to predicate over field 'a'.")
    with pytest.raises(CommandError) as e:
        compile_filter({"a": {"$ne": Regex("x")}})
    assert e.value.errmsg == "Can't have regex as arg to $ne."


def test_unknown_field_operator_is_bad_value():
    with pytest.raises(CommandError) as e:
        compile_filter({"a": {"$foo": 1}})
    assert (e.value.code, e.value.errmsg) == (2, "unknown operator: $foo")


def test_operator_document_with_plain_field_is_unknown_operator():
    with pytest.raises(CommandError) as e:
        compile_filter({"a": {"$gt": 1, "b": 2}})
    assert e.value.errmsg == "unknown operator: b"


def test_document_not_starting_with_dollar_is_literal_equality():
    assert matches({"a": {"b": 1, "$c": 2}}, {"a": {"b": 1, "$c": 2}})


def test_inf_compares_above_every_finite_number():
    assert matches({"a": {"$gt": 10**300}}, {"a": math.inf})
    assert matches({"a": {"$lt": -1e308}}, {"a": -math.inf})


def test_range_on_scalar_and_on_other_types():
    spec = {"a": {"$gte": 2, "$lt": 4.5}}
    assert [matches(spec, {"a": v}) for v in (1, 2, 4, 4.5, Decimal128("3"), "3", None)] == [
        False, True, True, False, True, False, False]
    assert matches({"a": {"$lt": "m", "$gt": "c"}}, {"a": "d"})
    assert not matches({"a": {"$lt": "m", "$gt": "c"}}, {"a": "z"})
