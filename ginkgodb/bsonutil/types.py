"""BSON value model over pymongo's `bson` types: type brackets and $type aliases.

MongoDB orders values of different types by a canonical bracket (see `BRACKET_*`); within a
bracket values compare by value. The numbers here are ours (only their order matters) but they are
persisted inside index keys: DO NOT CHANGE THEM.
"""
from __future__ import annotations

import datetime
import decimal
import math
import re
import uuid
from collections.abc import Mapping
from typing import Any

from bson.binary import Binary
from bson.code import Code
from bson.datetime_ms import DatetimeMS
from bson.dbref import DBRef
from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.max_key import MaxKey
from bson.min_key import MinKey
from bson.objectid import ObjectId
from bson.regex import Regex
from bson.timestamp import Timestamp

# Canonical brackets, in MongoDB's comparison order. Persisted in index keys: DO NOT CHANGE.
BRACKET_MINKEY = 0x05
BRACKET_UNDEFINED = 0x08
BRACKET_NULL = 0x0A
BRACKET_NUMBER = 0x14
BRACKET_STRING = 0x1E
BRACKET_OBJECT = 0x28
BRACKET_ARRAY = 0x32
BRACKET_BINARY = 0x3C
BRACKET_OBJECTID = 0x46
BRACKET_BOOL = 0x50
BRACKET_DATE = 0x5A
BRACKET_TIMESTAMP = 0x5F
BRACKET_REGEX = 0x64
BRACKET_DBPOINTER = 0x6E
BRACKET_CODE = 0x78
BRACKET_CODE_WSCOPE = 0x7D
BRACKET_MAXKEY = 0xF0


class Undefined:
    """The deprecated BSON undefined value, for $type and ordering only."""

    def __repr__(self) -> str:
        return "Undefined()"


def bracket(value: Any) -> int:
    """Canonical type bracket of a decoded BSON value (MongoDB's cross-type order)."""
    t = type(value)
    b = _BRACKET_BY_TYPE.get(t)
    if b is not None:
        return b
    if value is None:
        return BRACKET_NULL
    if isinstance(value, bool):
        return BRACKET_BOOL
    if isinstance(value, (int, float, Decimal128, decimal.Decimal)):
        return BRACKET_NUMBER
    if isinstance(value, Code):  # a str subclass: check it before str
        return BRACKET_CODE_WSCOPE if value.scope is not None else BRACKET_CODE
    if isinstance(value, str):
        return BRACKET_STRING
    if isinstance(value, DBRef):
        return BRACKET_OBJECT
    if isinstance(value, Mapping):
        return BRACKET_OBJECT
    if isinstance(value, (list, tuple)):
        return BRACKET_ARRAY
    if isinstance(value, (bytes, Binary, uuid.UUID)):
        return BRACKET_BINARY
    if isinstance(value, ObjectId):
        return BRACKET_OBJECTID
    if isinstance(value, (datetime.datetime, DatetimeMS)):
        return BRACKET_DATE
    if isinstance(value, Timestamp):
        return BRACKET_TIMESTAMP
    if isinstance(value, (Regex, re.Pattern)):
        return BRACKET_REGEX
    if isinstance(value, Code):
        return BRACKET_CODE_WSCOPE if value.scope is not None else BRACKET_CODE
    if isinstance(value, MinKey):
        return BRACKET_MINKEY
    if isinstance(value, MaxKey):
        return BRACKET_MAXKEY
    if isinstance(value, Undefined):
        return BRACKET_UNDEFINED
    raise TypeError(f"not a BSON value: {t.__name__}")


_BRACKET_BY_TYPE: dict[type, int] = {
    type(None): BRACKET_NULL, bool: BRACKET_BOOL, int: BRACKET_NUMBER, Int64: BRACKET_NUMBER,
    float: BRACKET_NUMBER, Decimal128: BRACKET_NUMBER, str: BRACKET_STRING, dict: BRACKET_OBJECT,
    list: BRACKET_ARRAY, bytes: BRACKET_BINARY, Binary: BRACKET_BINARY, ObjectId: BRACKET_OBJECTID,
    datetime.datetime: BRACKET_DATE, Timestamp: BRACKET_TIMESTAMP, Regex: BRACKET_REGEX,
    MinKey: BRACKET_MINKEY, MaxKey: BRACKET_MAXKEY,
}


# $type: BSON type numbers and their aliases (MongoDB's names).
TYPE_ALIASES: dict[str, int] = {
    "double": 1, "string": 2, "object": 3, "array": 4, "binData": 5, "undefined": 6,
    "objectId": 7, "bool": 8, "date": 9, "null": 10, "regex": 11, "dbPointer": 12,
    "javascript": 13, "symbol": 14, "javascriptWithScope": 15, "int": 16, "timestamp": 17,
    "long": 18, "decimal": 19, "minKey": -1, "maxKey": 127,
}
TYPE_NAMES: dict[int, str] = {v: k for k, v in TYPE_ALIASES.items()}


def bson_type(value: Any) -> int:
    """The BSON element type number of a decoded value (int32 vs int64 by magnitude, as pymongo encodes)."""
    if value is None:
        return 10
    if isinstance(value, bool):
        return 8
    if isinstance(value, Int64):
        return 18
    if isinstance(value, int):
        return 16 if -2**31 <= value < 2**31 else 18
    if isinstance(value, float):
        return 1
    if isinstance(value, Code):  # a str subclass: check it before str
        return 15 if value.scope is not None else 13
    if isinstance(value, str):
        return 2
    if isinstance(value, Decimal128):
        return 19
    if isinstance(value, (list, tuple)):
        return 4
    if isinstance(value, (Mapping, DBRef)):
        return 3
    if isinstance(value, (bytes, Binary, uuid.UUID)):
        return 5
    if isinstance(value, ObjectId):
        return 7
    if isinstance(value, (datetime.datetime, DatetimeMS)):
        return 9
    if isinstance(value, (Regex, re.Pattern)):
        return 11
    if isinstance(value, Code):
        return 15 if value.scope is not None else 13
    if isinstance(value, Timestamp):
        return 17
    if isinstance(value, MinKey):
        return -1
    if isinstance(value, MaxKey):
        return 127
    if isinstance(value, Undefined):
        return 6
    raise TypeError(f"not a BSON value: {type(value).__name__}")


def is_number(value: Any) -> bool:
    """Sorts in the number bracket: any int, float, Decimal128 or decimal.Decimal but bool."""
    return bracket(value) == BRACKET_NUMBER if not isinstance(value, bool) else False


def is_bson_number(value: Any) -> bool:
    """int, Int64, float or Decimal128 by exact type, as decoded BSON numbers are (bool and other
    int or float subclasses are not numbers here)."""
    t = type(value)
    return t is int or t is float or t is Int64 or t is Decimal128


def is_number_instance(value: Any) -> bool:
    """Any int, float or Decimal128 instance but bool (subclasses count, Int64 among them): how
    command arguments are checked."""
    return isinstance(value, (int, float, Decimal128)) and not isinstance(value, bool)


def to_decimal(value: Any) -> decimal.Decimal:
    """Exact decimal value of any BSON number (used where int/double/decimal must compare)."""
    if isinstance(value, Decimal128):
        return value.to_decimal()
    if isinstance(value, float):
        return decimal.Decimal(value)
    return decimal.Decimal(int(value))


def is_nan(value: Any) -> bool:
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, Decimal128):
        return value.to_decimal().is_nan()
    return False


def type_name(value: Any) -> str:
    """mongod's name for a value's type, as used in error messages."""
    return TYPE_NAMES.get(bson_type(value), "unknown")
