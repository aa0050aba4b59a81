"""BSON values printed the way mongod's BSONElement::toString prints them (explain indexBounds).

Doubles as appendDoubleNice (`5.0`, `inf.0`), integers bare, strings in double quotes without
escaping and cut after 150 bytes when longer than 159, dates as `new Date(ms)`, decimals bare,
BinData cut after 70 bytes when longer than 80 and subtype-4 UUIDs as `UUID("…")`.
"""
from __future__ import annotations

import uuid
from typing import Any

from bson.binary import Binary
from bson.code import Code
from bson.datetime_ms import DatetimeMS
from bson.decimal128 import Decimal128

from ..bsonutil import shell_format
from ..bsonutil import types as T
from ..bsonutil.compare import binary_parts, date_millis
from ..bsonutil.shell_format import Style, double_nice, quoted


class Labelled:
    """A bound no Python value stands for (intervals.TypeEdge) carries the text explain shows.

    A base class rather than a runtime-checkable Protocol: explain formats every bound of an
    index scan, and a Protocol's isinstance costs tens of microseconds a value."""

    __slots__ = ()
    explain_text: str


def format_value(v: Any) -> str:
    """One value as mongod prints it without a field name."""
    return shell_format.format_value(v, EXPLAIN)


def _format_string(s: str) -> str:
    data = s.encode("utf-8", "surrogatepass")
    if len(data) + 1 > 160:
        return '"' + data[:150].decode("utf-8", "ignore") + '..."'
    return quoted(s)


def _format_code(c: Code) -> str:
    if c.scope is not None:
        return f"CodeWScope( {str(c)}, {format_value(dict(c.scope))})"
    text = str(c)
    data = text.encode("utf-8", "surrogatepass")
    return data[:70].decode("utf-8", "ignore") + "..." if len(data) + 1 > 80 else text


def _format_binary(v: Any) -> str:
    _, subtype, data = binary_parts(v)
    if subtype == 4 and len(data) == 16:
        h = data.hex()
        return f'UUID("{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}")'
    if len(data) > 80:
        return f"BinData({subtype}, {data[:70].hex().upper()}...)"
    return f"BinData({subtype}, {data.hex().upper()})"


EXPLAIN = Style(double_nice, _format_string, (
    (Labelled, lambda v: v.explain_text), (Code, _format_code), (Decimal128, str),
    ((bytes, Binary, uuid.UUID), _format_binary),
    (DatetimeMS, lambda v: f"new Date({date_millis(v)})"), (T.Undefined, lambda v: "undefined")))

__all__ = ["format_value"]
