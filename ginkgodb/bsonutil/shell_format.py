"""BSON values printed the way mongod prints them in messages and explain output.

Duplicate-key messages (`dup key: { _id: 1 }`), filter and update errors and explain's
indexBounds all print values as BSONElement::toString does, with a few differences: how doubles
print (`1`, `1.0`, `inf.0`), how strings are quoted or cut, and some types one context prints its
own way. One walk serves them all; a `Style` carries what differs. Documents are `{ k: v }` and
arrays `[ v ]` everywhere (an update error's `{_id: 1}` gets its braces from the message).
"""
from __future__ import annotations

import datetime
import decimal
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from bson.binary import Binary
from bson.dbref import DBRef
from bson.decimal128 import Decimal128
from bson.max_key import MaxKey
from bson.min_key import MinKey
from bson.objectid import ObjectId
from bson.regex import Regex
from bson.timestamp import Timestamp

from .compare import date_millis, regex_parts

Formatter = Callable[[Any], str]


@dataclass(frozen=True, slots=True)
class Style:
    """How one context prints doubles and strings; `special` (type, formatter) pairs come first."""

    double: Callable[[float], str]
    string: Callable[[str], str]
    special: tuple[tuple[type | tuple[type, ...], Formatter], ...] = ()


def quoted(s: str) -> str:
    """A string in double quotes, unescaped, as BSONElement::toString writes it."""
    return f'"{s}"'


def double_nice(x: float) -> str:
    """mongod's appendDoubleNice: %.16g, plus '.0' when that shows no '.', 'E' or 'N'.

    The test is on capitals, as mongod's, so `inf.0`, `nan.0` and, faithfully, `1e+20.0`.
    """
    text = f"{x:.16g}"
    if "." not in text and "E" not in text and "N" not in text:
        text += ".0"
    return text


def format_double(v: float) -> str:
    """A double in a duplicate-key message: integral values bare (`1`), others as repr."""
    if math.isnan(v):
        return "nan.0"
    if math.isinf(v):
        return "inf.0" if v > 0 else "-inf.0"
    if v == int(v) and abs(v) < 1e16:
        return str(int(v)) if v or math.copysign(1, v) > 0 else "-0.0"
    return repr(v)


def _shell_string(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _shell_regex(v: Any) -> str:
    """Duplicate-key messages print a regex's flags only when they are held as text."""
    flags = v.flags if isinstance(v.flags, str) else ""
    return f"/{v.pattern}/{flags}"


SHELL = Style(format_double, _shell_string, (((Regex, re.Pattern), _shell_regex),))


def _dup_key_decimal(v: Decimal128) -> str:
    """A Decimal128 key as mongod's duplicate-key message shows it: rebuilt from the index key
    without its type information, so the number it equals (`10`, `0.5`), as a decimal only when
    no integer or double holds it exactly."""
    d = v.to_decimal()
    if d.is_nan():
        return 'NumberDecimal("NaN")'
    if d.is_infinite():
        return format_double(float(d))
    if d == d.to_integral_value() and abs(d) < 2 ** 63:
        return str(int(d))
    if decimal.Decimal(float(d)) == d:
        return format_double(float(d))
    return f'NumberDecimal("{v}")'


#: duplicate-key messages: the shell style, decimals printed as the number they hold
DUP_KEY = Style(format_double, _shell_string, (*SHELL.special, (Decimal128, _dup_key_decimal)))


def format_value(v: Any, style: Style = SHELL) -> str:
    """One value without a field name."""
    for types, special in style.special:
        if isinstance(v, types):
            return special(v)
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(int(v))
    if isinstance(v, float):
        return style.double(v)
    if isinstance(v, str):
        return style.string(v)
    if isinstance(v, DBRef):
        return format_document(v.as_doc(), style)
    if isinstance(v, Mapping):
        return format_document(v, style)
    if isinstance(v, (list, tuple)):
        return "[ " + ", ".join(format_value(x, style) for x in v) + " ]" if v else "[]"
    return _format_other(v)


def format_element(name: str, v: Any, style: Style = SHELL) -> str:
    """`name: value`, as BSONElement::toString(includeFieldName=true) writes it."""
    return f"{name}: {format_value(v, style)}"


def format_document(d: Mapping, style: Style = SHELL) -> str:
    if not d:
        return "{}"
    return "{ " + ", ".join(format_element(k, v, style) for k, v in d.items()) + " }"


def _format_other(v: Any) -> str:
    if isinstance(v, Decimal128):
        return f'NumberDecimal("{v}")'
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
    return repr(v)


__all__ = ["Style", "SHELL", "DUP_KEY", "quoted", "double_nice", "format_double", "format_value",
           "format_element", "format_document"]
