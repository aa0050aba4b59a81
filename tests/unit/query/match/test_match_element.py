"""$exists and $type."""
import datetime

from bson.binary import Binary
from bson.code import Code
from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.max_key import MaxKey
from bson.min_key import MinKey
from bson.objectid import ObjectId
from bson.regex import Regex
from bson.timestamp import Timestamp
from matchkit import compile_error, matches


def test_exists_true_matches_present_fields_including_null():
    assert matches({"a": {"$exists": True}}, {"a": None})
    assert matches({"a": {"$exists": True}}, {"a": []})
    assert not matches({"a": {"$exists": True}}, {"b": 1})


def test_exists_false_matches_missing_fields():
    assert matches({"a": {"$exists": False}}, {})
    assert not matches({"a": {"$exists": False}}, {"a": None})


def test_exists_argument_uses_bson_truthiness():
    for truthy in (1, -1, 0.5, "false", "", {}, [], float("nan"), Decimal128("1")):
        assert matches({"a": {"$exists": truthy}}, {"a": 1}), truthy
    for falsy in (0, 0.0, None, False, Int64(0), Decimal128("0")):
        assert matches({"a": {"$exists": falsy}}, {}), falsy


def test_exists_through_arrays_of_documents():
    assert matches({"a.b": {"$exists": True}}, {"a": [{"c": 1}, {"b": 2}]})
    assert not matches({"a.b": {"$exists": True}}, {"a": [{"c": 1}]})
    assert not matches({"a.b": {"$exists": True}}, {"a": [1, 2]})
    assert matches({"a.b": {"$exists": False}}, {"a": [1, 2]})
    assert not matches({"a.b": {"$exists": False}}, {"a": [{"c": 1}, {"b": 2}]})


def test_exists_with_numeric_component():
    assert matches({"a.1": {"$exists": True}}, {"a": [1, 2]})
    assert not matches({"a.2": {"$exists": True}}, {"a": [1, 2]})


def test_type_by_number_and_alias():
    assert matches({"a": {"$type": 2}}, {"a": "x"})
    assert matches({"a": {"$type": "string"}}, {"a": "x"})
    assert not matches({"a": {"$type": "string"}}, {"a": 1})
    assert not matches({"a": {"$type": "null"}}, {})
    assert matches({"a": {"$type": "null"}}, {"a": None})


def test_type_distinguishes_number_widths():
    assert matches({"a": {"$type": "int"}}, {"a": 1})
    assert matches({"a": {"$type": "long"}}, {"a": Int64(1)})
    assert matches({"a": {"$type": "long"}}, {"a": 2**40})
    assert matches({"a": {"$type": "double"}}, {"a": 1.0})
    assert matches({"a": {"$type": "decimal"}}, {"a": Decimal128("1")})
    assert not matches({"a": {"$type": "int"}}, {"a": 1.0})


def test_type_number_alias_matches_every_numeric_type():
    for v in (1, Int64(1), 1.5, Decimal128("1")):
        assert matches({"a": {"$type": "number"}}, {"a": v})
    assert not matches({"a": {"$type": "number"}}, {"a": True})


def test_type_list_matches_any_listed_type():
    assert matches({"a": {"$type": ["bool", 2]}}, {"a": True})
    assert matches({"a": {"$type": ["bool", 2]}}, {"a": "x"})
    assert not matches({"a": {"$type": ["bool", 2]}}, {"a": 1})


def test_type_array_matches_arrays_and_nested_arrays():
    assert matches({"a": {"$type": "array"}}, {"a": []})
    assert matches({"a": {"$type": "array"}}, {"a": [[1]]})
    assert not matches({"a": {"$type": "array"}}, {"a": 1})


def test_type_checks_array_elements():
    assert matches({"a": {"$type": "string"}}, {"a": [1, "x"]})


def test_type_of_other_bson_values():
    cases = {"objectId": ObjectId(), "date": datetime.datetime(2020, 1, 1), "regex": Regex("x"),
             "binData": Binary(b"x", 5), "timestamp": Timestamp(1, 1), "minKey": MinKey(),
             "maxKey": MaxKey(), "javascript": Code("f"), "object": {"x": 1}, "bool": False}
    for alias, value in cases.items():
        assert matches({"a": {"$type": alias}}, {"a": value}), alias
    assert matches({"a": {"$type": "binData"}}, {"a": b"raw"})


def test_type_rejects_unknown_alias():
    assert compile_error({"a": {"$type": "xyz"}}) == (2, "Unknown type name alias: xyz")


def test_type_rejects_missing_alias_with_hint():
    code, msg = compile_error({"a": {"$type": "missing"}})
    assert code == 2 and msg.startswith("'missing' is not a legal type name.")


def test_type_rejects_bad_numeric_codes():
    assert compile_error({"a": {"$type": 100}}) == (2, "Invalid numerical type code: 100")
    assert compile_error({"a": {"$type": 1.5}}) == (2, "Invalid numerical type code: 1.5")
    assert compile_error({"a": {"$type": 0}}) == (
        2, "Invalid numerical type code: 0. Instead use {$exists:false}.")


def test_type_rejects_other_operand_types():
    assert compile_error({"a": {"$type": {"x": 1}}}) == (
        14, "type must be represented as a number or a string")


def test_type_needs_at_least_one_type():
    assert compile_error({"a": {"$type": []}}) == (9, "a must match at least one type")


def test_type_accepts_integral_doubles_and_minkey_code():
    assert matches({"a": {"$type": 2.0}}, {"a": "x"})
    assert matches({"a": {"$type": -1}}, {"a": MinKey()})
    assert matches({"a": {"$type": 127}}, {"a": MaxKey()})
