"""BSON values printed the way mongod's BSONElement::toString prints them (explain indexBounds).

Doubles use C's "%.16g" plus ".0" when that shows no '.', 'E' or 'N' (so `inf.0`, `5.0` and,
faithfully, `1e+20.0`). Integers print bare, strings in double quotes without escaping and cut
after 150 bytes when longer than 159, dates as `new Date(ms)`.
"""
from __future__ import annotations

import datetime
import re
import uuid
from collections.abc import Mapping
from typing import Any

from bson.binary import Binary
from bson.code import Code
from bson.datetime_ms import DatetimeMS
from bson.dbref import DBRef
from bson.decimal128 import Decimal128
from bson.max_key import MaxKey
from bson.min_key import MinKey
from bson.objectid import ObjectId
from bson.regex import Regex
from bson.timestamp import Timestamp

from ..bsonutil import types as T
from ..bsonutil.compare import date_millis, regex_parts


def format_double(x: float) -> str:
    """mongod's appendDoubleNice."""
    text = "%.16g" % x
    if "." not in text and "E" not in text and "N" not in text:
        text += ".0"
    return text


def format_value(v: Any) -> str:
    """One value as mongod prints it without a field name."""
    if hasattr(v, "explain_text"):
        return v.explain_text
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(int(v))
    if isinstance(v, float):
        return format_double(v)
    if isinstance(v, Decimal128):
        return _format_decimal(v)
    if isinstance(v, Code):
        return _format_code(v)
    if isinstance(v, str):
        return _format_string(v)
    if isinstance(v, (Mapping, DBRef)):
        items = v.as_doc().items() if isinstance(v, DBRef) else v.items()
        return _format_container([f"{k}: {format_value(x)}" for k, x in items], "{", "}")
    if isinstance(v, (list, tuple)):
        return _format_container([format_value(x) for x in v], "[", "]")
    return _format_other(v)


def _format_other(v: Any) -> str:
    if isinstance(v, ObjectId):
        return f"ObjectId('{v}')"
    if isinstance(v, (datetime.datetime, DatetimeMS)):
        return f"new Date({date_millis(v)})"
    if isinstance(v, (Regex, re.Pattern)):
        pattern, flags = regex_parts(v)
        return f"/{pattern}/{flags}"
    if isinstance(v, Timestamp):
        return f"Timestamp({v.time}, {v.inc})"
    if isinstance(v, (bytes, Binary, uuid.UUID)):
        return _format_binary(v)
    if isinstance(v, MinKey):
        return "MinKey"
    if isinstance(v, MaxKey):
        return "MaxKey"
    if isinstance(v, T.Undefined):
        return "undefined"
    return repr(v)


def _format_container(parts: list[str], open_: str, close: str) -> str:
    if not parts:
        return open_ + close
    return f"{open_} " + ", ".join(parts) + f" {close}"


def _format_string(s: str) -> str:
    data = s.encode("utf-8", "surrogatepass")
    if len(data) + 1 > 160:
        return '"' + data[:150].decode("utf-8", "ignore") + '..."'
    return f'"{s}"'


def _format_code(c: Code) -> str:
    if c.scope is not None:
        return f"CodeWScope( {str(c)}, {format_value(dict(c.scope))})"
    text = str(c)
    data = text.encode("utf-8", "surrogatepass")
    return data[:70].decode("utf-8", "ignore") + "..." if len(data) + 1 > 80 else text


def _format_decimal(d: Decimal128) -> str:
    text = str(d)
    return {"Infinity": "Infinity", "-Infinity": "-Infinity"}.get(text, text)


def _format_binary(v: Any) -> str:
    if isinstance(v, uuid.UUID):
        subtype, data = 4, v.bytes
    elif isinstance(v, Binary):
        subtype, data = v.subtype, bytes(v)
    else:
        subtype, data = 0, bytes(v)
    if subtype == 4 and len(data) == 16:
        h = data.hex()
        return f'UUID("{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}")'
    if len(data) > 80:
        return f"BinData({subtype}, {data[:70].hex().upper()}...)"
    return f"BinData({subtype}, {data.hex().upper()})"


__all__ = ["format_value", "format_double"]
