"""$type, $convert and its shorthands: conversion table, onError/onNull, failures."""
import datetime

import pytest
from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.objectid import ObjectId
from exprkit import code_of, ev


def test_type_names_including_missing():
    assert ev({"$type": "$nope"}) == "missing"
    assert ev({"$type": 1}) == "int"
    assert ev({"$type": Int64(1)}) == "long"
    assert ev({"$type": [[1]]}) == "array"
    assert ev({"$type": {"$literal": None}}) == "null"


def test_is_number_and_is_array():
    assert ev({"$isNumber": Decimal128("1")}) is True
    assert ev({"$isNumber": "1"}) is False
    assert ev({"$isArray": [[1]]}) is True


@pytest.mark.parametrize("spec,expected", [
    ({"$toInt": "42"}, 42), ({"$toInt": 3.9}, 3), ({"$toInt": True}, 1),
    ({"$toLong": "-7"}, Int64(-7)), ({"$toDouble": "1e3"}, 1000.0), ({"$toDouble": False}, 0.0),
    ({"$toDecimal": 2.5}, Decimal128("2.50000000000000")), ({"$toString": 1.5}, "1.5"),
    ({"$toString": 3.0}, "3"), ({"$toBool": "false"}, True), ({"$toBool": 0}, False),
    ({"$toString": True}, "true"),
])
def test_shorthand_conversions(spec, expected):
    out = ev(spec)
    assert out == expected and type(out) is type(expected)


def test_dates_and_object_ids_convert():
    oid = ObjectId("507f1f77bcf86cd799439011")
    assert ev({"$toObjectId": str(oid)}) == oid
    assert ev({"$toString": oid}) == str(oid)
    d = datetime.datetime(2020, 1, 2, 3, 4, 5, 6000)
    assert ev({"$toString": d}) == "2020-01-02T03:04:05.006Z"
    assert ev({"$toDate": "2020-01-02T03:04:05.006Z"}) == d
    assert ev({"$toLong": d}) == Int64(1577934245006)


def test_null_converts_to_null():
    assert ev({"$toInt": None}) is None
    assert ev({"$convert": {"input": "$nope", "to": "int", "onNull": 7}}) == 7


def test_convert_on_error_replaces_conversion_failures():
    assert ev({"$convert": {"input": "abc", "to": "int", "onError": -1}}) == -1
    assert ev({"$convert": {"input": "5", "to": 16}}) == 5


@pytest.mark.parametrize("spec,code", [
    ({"$toInt": "abc"}, 241), ({"$toInt": 2**40}, 241), ({"$toObjectId": "xyz"}, 241),
    ({"$toDate": 1}, 241), ({"$convert": {"input": 1, "to": "nope"}}, 2),
    ({"$convert": {"input": 1}}, 9), ({"$convert": 1}, 9), ({"$toInt": [1, 2]}, 50723),
    ({"$convert": {"input": 1, "to": 100}}, 9),
])
def test_conversion_errors(spec, code):
    assert code_of(spec) == code
