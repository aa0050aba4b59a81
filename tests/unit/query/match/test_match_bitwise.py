"""$bitsAllSet, $bitsAnySet, $bitsAllClear, $bitsAnyClear."""
from bson.binary import Binary
from bson.decimal128 import Decimal128
from bson.int64 import Int64
from matchkit import compile_error, matches


def test_all_set_with_positions_and_mask():
    assert matches({"a": {"$bitsAllSet": [0, 2]}}, {"a": 5})
    assert not matches({"a": {"$bitsAllSet": [0, 1]}}, {"a": 5})
    assert matches({"a": {"$bitsAllSet": 5}}, {"a": 13})


def test_any_set_all_clear_any_clear():
    assert matches({"a": {"$bitsAnySet": [1, 2]}}, {"a": 4})
    assert not matches({"a": {"$bitsAnySet": [1, 3]}}, {"a": 4})
    assert matches({"a": {"$bitsAllClear": [0, 1]}}, {"a": 4})
    assert not matches({"a": {"$bitsAllClear": [2]}}, {"a": 4})
    assert matches({"a": {"$bitsAnyClear": [0, 2]}}, {"a": 4})
    assert not matches({"a": {"$bitsAnyClear": [2]}}, {"a": 4})


def test_negative_numbers_are_twos_complement_with_sign_extension():
    assert matches({"a": {"$bitsAllSet": [0, 1, 63, 200]}}, {"a": -1})
    assert matches({"a": {"$bitsAllClear": [0]}}, {"a": -2})
    assert matches({"a": {"$bitsAnySet": [100]}}, {"a": Int64(-5)})
    assert not matches({"a": {"$bitsAnySet": [100]}}, {"a": 5})


def test_doubles_must_be_integral():
    assert matches({"a": {"$bitsAllSet": [1]}}, {"a": 2.0})
    assert not matches({"a": {"$bitsAllSet": [1]}}, {"a": 2.5})
    assert not matches({"a": {"$bitsAllClear": [1]}}, {"a": float("nan")})
    assert not matches({"a": {"$bitsAllClear": [1]}}, {"a": 2.0**63})
    assert matches({"a": {"$bitsAllSet": [1]}}, {"a": Decimal128("2")})


def test_non_numeric_values_never_match():
    for v in ("3", None, [], {"x": 1}, True):
        assert not matches({"a": {"$bitsAllClear": [5]}}, {"a": v}), v


def test_bindata_values_are_little_endian_and_zero_extended():
    assert matches({"a": {"$bitsAllSet": [0, 9]}}, {"a": Binary(b"\x01\x02")})
    assert matches({"a": {"$bitsAllClear": [40]}}, {"a": b"\xff"})
    assert not matches({"a": {"$bitsAnySet": [40]}}, {"a": b"\xff"})


def test_bindata_mask():
    assert matches({"a": {"$bitsAllSet": Binary(b"\x05")}}, {"a": 5})
    assert matches({"a": {"$bitsAllSet": b"\x00\x01"}}, {"a": Binary(b"\x00\x01")})


def test_array_values_match_any_element():
    assert matches({"a": {"$bitsAllSet": [0]}}, {"a": [2, 3]})


def test_mask_errors():
    assert compile_error({"a": {"$bitsAllSet": -1}}) == (
        9, "Expected a positive number in: $bitsAllSet: -1")
    assert compile_error({"a": {"$bitsAllSet": 1.5}}) == (
        9, "Expected an integer: $bitsAllSet: 1.5")
    assert compile_error({"a": {"$bitsAnySet": "x"}}) == (
        2, 'a takes an Array, a number, or a BinData but received: $bitsAnySet: "x"')


def test_position_errors():
    assert compile_error({"a": {"$bitsAllSet": [-1]}}) == (
        2, "Failed to parse bit position. Expected a positive number in: 0: -1")
    assert compile_error({"a": {"$bitsAllSet": [0, "x"]}}) == (
        2, 'Failed to parse bit position. Expected a number in: 1: "x"')
    assert compile_error({"a": {"$bitsAllSet": [1.5]}}) == (
        2, "Failed to parse bit position. Expected an integer: 0: 1.5")
