"""Arithmetic: type promotion, overflow, dates, null handling and mongod's error codes."""
import datetime
import math

import pytest
from bson.decimal128 import Decimal128
from bson.int64 import Int64
from exprkit import code_of, ev

D = datetime.datetime(2024, 1, 1)


def test_add_keeps_int_until_it_overflows_to_long_then_double():
    assert type(ev({"$add": [1, 2]})) is int
    r = ev({"$add": [2**31 - 1, 1]})
    assert r == 2**31 and type(r) is Int64
    r = ev({"$add": [Int64(2**63 - 1), 1]})
    assert type(r) is float


def test_add_with_double_and_decimal_promotes():
    assert ev({"$add": [1, 0.5]}) == 1.5
    r = ev({"$add": [1, Decimal128("0.5")]})
    assert r == Decimal128("1.5")


def test_add_date_and_milliseconds():
    assert ev({"$add": ["$d", 1000]}, {"d": D}) == D + datetime.timedelta(seconds=1)
    assert ev({"$add": ["$d", 2.5]}, {"d": D}) == D + datetime.timedelta(milliseconds=3)


def test_add_null_and_missing_give_null():
    assert ev({"$add": [1, None]}) is None
    assert ev({"$add": [1, "$nope"]}) is None


def test_add_errors():
    assert code_of({"$add": [1, "a"]}) == 14
    assert code_of({"$add": ["$d", "$d"]}, {"d": D}) == 16612


def test_subtract_numbers_and_dates():
    assert ev({"$subtract": [5, 7]}) == -2
    assert ev({"$subtract": ["$a", "$b"]}, {"a": D, "b": D - datetime.timedelta(seconds=2)}) == 2000
    assert ev({"$subtract": ["$a", 1000]}, {"a": D}) == D - datetime.timedelta(seconds=1)
    assert code_of({"$subtract": [1, "$a"]}, {"a": D}) == 14


def test_multiply_promotes_and_overflows():
    assert ev({"$multiply": [2, 3, 4]}) == 24
    assert type(ev({"$multiply": [2**20, 2**20]})) is Int64
    assert ev({"$multiply": [2, 1.5]}) == 3.0
    assert code_of({"$multiply": [2, "x"]}) == 14


def test_divide_always_double_unless_decimal():
    assert ev({"$divide": [6, 3]}) == 2.0 and type(ev({"$divide": [6, 3]})) is float
    assert ev({"$divide": [Decimal128("1"), 4]}) == Decimal128("0.25")
    assert code_of({"$divide": [1, 0]}) == 2
    assert ev({"$divide": [1, "$nope"]}) is None


def test_mod_sign_follows_dividend():
    assert ev({"$mod": [-7, 2]}) == -1
    assert ev({"$mod": [7.5, 2]}) == 1.5
    assert type(ev({"$mod": [Int64(7), 2]})) is Int64
    assert code_of({"$mod": [1, 0]}) == 16610


@pytest.mark.parametrize("spec,expected", [
    ({"$abs": -3}, 3), ({"$ceil": 1.2}, 2.0), ({"$floor": -1.2}, -2.0), ({"$sqrt": 16}, 4.0),
    ({"$exp": 0}, 1.0), ({"$ln": 1}, 0.0), ({"$log10": 1000}, 3.0), ({"$log": [8, 2]}, 3.0),
    ({"$pow": [2, 10]}, 1024), ({"$pow": [2, -1]}, 0.5), ({"$trunc": [1.987, 2]}, 1.98),
    ({"$round": [2.5]}, 2.0), ({"$round": [3.5]}, 4.0), ({"$round": [1250, -2]}, 1200),
])
def test_numeric_functions(spec, expected):
    assert ev(spec) == expected


def test_abs_of_int_min_becomes_long():
    assert type(ev({"$abs": -2**31})) is Int64


def test_ceil_keeps_negative_zero():
    assert math.copysign(1.0, ev({"$ceil": -0.5})) == -1.0


@pytest.mark.parametrize("spec,code", [
    ({"$abs": "x"}, 28765), ({"$sqrt": -1}, 28714), ({"$ln": 0}, 28766), ({"$log10": -1}, 28761),
    ({"$log": [0, 2]}, 28758), ({"$log": [8, 1]}, 28759), ({"$pow": [0, -1]}, 28764),
    ({"$round": [1.5, 101]}, 51083), ({"$round": [1.5, 1.5]}, 51082), ({"$round": ["x"]}, 51081),
])
def test_numeric_function_errors(spec, code):
    assert code_of(spec) == code


def test_numeric_functions_pass_null_through():
    for op in ("$abs", "$ceil", "$floor", "$sqrt", "$exp", "$ln", "$log10"):
        assert ev({op: "$nope"}) is None
