"""Operands printed the way mongod prints a BSONElement in its error messages.

`describe_element("$size", 1.5)` gives `$size: 1.5`; doubles keep a `.0` (`3.0`), strings are
quoted, documents look like `{ a: 1 }`. Only error text depends on this module.
"""
from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from typing import Any

from bson.binary import Binary
from bson.code import Code
from bson.dbref import DBRef
from bson.decimal128 import Decimal128
from bson.max_key import MaxKey
from bson.min_key import MinKey
from bson.objectid import ObjectId
from bson.regex import Regex
from bson.timestamp import Timestamp

from ginkgodb.bsonutil.compare import date_millis, regex_parts


def describe_element(name: str, value: Any) -> str:
    """`name: value`, as BSONElement::toString(includeFieldName=true) writes it."""
    return f"{name}: {describe_value(value)}"


def describe_value(v: Any) -> str:
    if v is None:
        return "null"
    if v is True or v is False:
        return "true" if v else "false"
    if isinstance(v, int):
        return str(int(v))
    if isinstance(v, float):
        return double_nice(v)
    if isinstance(v, str):
        return '"' + v + '"'
    if isinstance(v, Decimal128):
        return f'NumberDecimal("{v}")'
    if isinstance(v, DBRef):
        return describe_value(v.as_doc())
    if isinstance(v, Mapping):
        if not v:
            return "{}"
        return "{ " + ", ".join(describe_element(k, x) for k, x in v.items()) + " }"
    if isinstance(v, (list, tuple)):
        if not v:
            return "[]"
        return "[ " + ", ".join(describe_value(x) for x in v) + " ]"
    return _describe_other(v)


def _describe_other(v: Any) -> str:
    if isinstance(v, ObjectId):
        return f"ObjectId('{v}')"
    if isinstance(v, datetime.datetime):
        return f"new Date({date_millis(v)})"
    if isinstance(v, (Regex, re.Pattern)):
        pattern, flags = regex_parts(v)
        return f"/{pattern}/{flags}"
    if isinstance(v, Timestamp):
        return f"Timestamp({v.time}, {v.inc})"
    if isinstance(v, Binary):
        return f"BinData({v.subtype}, {bytes(v).hex().upper()})"
    if isinstance(v, bytes):
        return f"BinData(0, {v.hex().upper()})"
    if isinstance(v, MinKey):
        return "MinKey"
    if isinstance(v, MaxKey):
        return "MaxKey"
    if isinstance(v, Code):
        return str(v)
    return repr(v)


def double_nice(x: float) -> str:
    """mongod's appendDoubleNice: %.16g, plus '.0' when that looks like an integer."""
    s = "%.16g" % x
    if "." not in s and "E" not in s and "N" not in s:
        s += ".0"
    return s


def number_g(x: Any) -> str:
    """A number streamed as a C++ double ('%g'), as in "Invalid numerical type code: 1.5"."""
    if isinstance(x, Decimal128):
        x = float(x.to_decimal())
    return "%g" % float(x)
