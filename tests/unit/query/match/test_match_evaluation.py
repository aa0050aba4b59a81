"""$mod, $regex/$options and $expr."""
import re

from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.regex import Regex
from matchkit import compile_error, matches

from ginkgodb.query.match import compile_filter


def test_mod_matches_remainder():
    assert matches({"a": {"$mod": [4, 1]}}, {"a": 9})
    assert not matches({"a": {"$mod": [4, 1]}}, {"a": 10})
    assert matches({"a": {"$mod": [4, 1]}}, {"a": [2, 5]})


def test_mod_remainder_takes_the_sign_of_the_dividend():
    assert matches({"a": {"$mod": [3, -2]}}, {"a": -5})
    assert not matches({"a": {"$mod": [3, 1]}}, {"a": -5})
    assert matches({"a": {"$mod": [-3, 2]}}, {"a": 5})


def test_mod_truncates_doubles_and_decimals():
    assert matches({"a": {"$mod": [3, 1]}}, {"a": 4.9})
    assert matches({"a": {"$mod": [3, -1]}}, {"a": -4.9})
    assert matches({"a": {"$mod": [3, 1]}}, {"a": Decimal128("4.9")})
    assert matches({"a": {"$mod": [3.9, 1.2]}}, {"a": 4})
    assert matches({"a": {"$mod": [Int64(3), 0]}}, {"a": Int64(9)})


def test_mod_ignores_non_numbers_nan_and_infinity():
    for v in ("9", None, float("nan"), float("inf"), Decimal128("Infinity"), 1e30):
        assert not matches({"a": {"$mod": [4, 1]}}, {"a": v}), v


def test_mod_errors():
    assert compile_error({"a": {"$mod": 4}}) == (2, "malformed mod, needs to be an array")
    assert compile_error({"a": {"$mod": []}}) == (2, "malformed mod, not enough elements")
    assert compile_error({"a": {"$mod": [4]}}) == (2, "malformed mod, not enough elements")
    assert compile_error({"a": {"$mod": [4, 1, 2]}}) == (2, "malformed mod, too many elements")
    assert compile_error({"a": {"$mod": ["4", 1]}}) == (2, "malformed mod, divisor not a number")
    assert compile_error({"a": {"$mod": [4, None]}}) == (2, "malformed mod, remainder not a number")
    assert compile_error({"a": {"$mod": [0, 1]}}) == (2, "divisor cannot be 0")
    assert compile_error({"a": {"$mod": [0.5, 1]}}) == (2, "divisor cannot be 0")
    assert compile_error({"a": {"$mod": [float("nan"), 1]}}) == (
        2, "malformed mod, divisor value is invalid :: caused by :: "
           "Unable to coerce NaN/Inf to integral type")
    assert compile_error({"a": {"$mod": [1, float("inf")]}}) == (
        2, "malformed mod, remainder value is invalid :: caused by :: "
           "Unable to coerce NaN/Inf to integral type")
    assert compile_error({"a": {"$mod": [1e19, 1]}}) == (
        2, "malformed mod, divisor value is invalid :: caused by :: "
           "Out of bounds coercing to integral value")


def test_regex_field_value_matches_strings():
    assert matches({"a": Regex("^ab")}, {"a": "abc"})
    assert not matches({"a": Regex("^ab")}, {"a": "cab"})
    assert not matches({"a": Regex("1")}, {"a": 1})


def test_regex_field_value_matches_equal_regex_values():
    assert matches({"a": Regex("^ab", "i")}, {"a": Regex("^ab", "i")})
    assert not matches({"a": Regex("^ab", "i")}, {"a": Regex("^ab")})


def test_compiled_python_pattern_is_a_regex():
    assert matches({"a": re.compile("^ab", re.I)}, {"a": "ABc"})


def test_regex_operator_with_options():
    assert matches({"a": {"$regex": "^ab", "$options": "i"}}, {"a": "ABc"})
    assert matches({"a": {"$options": "i", "$regex": "^ab"}}, {"a": "ABc"})
    assert matches({"a": {"$regex": Regex("^ab", "i")}}, {"a": "ABc"})
    assert matches({"a": {"$regex": "^b", "$options": "m"}}, {"a": "a\nb"})
    assert not matches({"a": {"$regex": "^b"}}, {"a": "a\nb"})
    assert matches({"a": {"$regex": "a.b", "$options": "s"}}, {"a": "a\nb"})
    assert matches({"a": {"$regex": "a b # comment", "$options": "x"}}, {"a": "ab"})


def test_regex_matches_array_elements():
    assert matches({"a": {"$regex": "^x"}}, {"a": [1, "xy"]})


def test_regex_can_combine_with_other_operators():
    assert matches({"a": {"$regex": "^x", "$ne": "xz"}}, {"a": "xy"})
    assert not matches({"a": {"$regex": "^x", "$ne": "xy"}}, {"a": "xy"})


def test_regex_errors():
    assert compile_error({"a": {"$regex": 1}}) == (2, "$regex has to be a string")
    assert compile_error({"a": {"$regex": "x", "$options": 1}}) == (2, "$options has to be a string")
    assert compile_error({"a": {"$options": "i"}}) == (2, "$options needs a $regex")
    assert compile_error({"a": {"$regex": Regex("x", "i"), "$options": "m"}}) == (
        51075, "options set in both $regex and $options")
    assert compile_error({"a": {"$options": "m", "$regex": Regex("x", "i")}}) == (
        51074, "options set in both $regex and $options")
    assert compile_error({"a": {"$regex": "x", "$options": "q"}}) == (
        51108, "invalid flag in regex options: q")
    assert compile_error({"a": {"$regex": "a\0b"}}) == (
        2, "Regular expression cannot contain an embedded null byte")
    assert compile_error({"a": {"$regex": "(unclosed"}})[0] == 51091


def test_empty_options_before_a_flagged_regex_are_allowed():
    assert matches({"a": {"$options": "", "$regex": Regex("^x", "i")}}, {"a": "X"})
    assert compile_error({"a": {"$regex": Regex("^x", "i"), "$options": ""}})[0] == 51075


def test_expr_evaluates_against_the_document():
    m = compile_filter({"$expr": {"$gt": ["$a", "$b"]}})
    assert m({"a": 2, "b": 1})
    assert not m({"a": 1, "b": 2})


def test_expr_truthiness():
    assert not matches({"$expr": "$missing"}, {})
    assert not matches({"$expr": "$a"}, {"a": 0})
    assert not matches({"$expr": "$a"}, {"a": None})
    assert matches({"$expr": "$a"}, {"a": []})
    assert matches({"$expr": "$a"}, {"a": ""})


def test_expr_combines_with_other_conditions():
    assert matches({"a": 1, "$expr": {"$eq": ["$a", 1]}}, {"a": 1})


def test_expr_sees_let_variables():
    m = compile_filter({"$expr": {"$eq": ["$a", "$$target"]}}, variables={"target": 3})
    assert m({"a": 3}) and not m({"a": 4})


def test_expr_is_top_level_only():
    assert compile_error({"a": {"$elemMatch": {"$expr": 1}}}) == (
        2, "$expr can only be applied to the top-level document")
