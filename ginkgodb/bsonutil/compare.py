"""MongoDB's total order over BSON values (the order of sort, $lt/$gt and index keys).

`compare(a, b)` is the reference definition; the key codec's byte order must agree with it
(tests/property proves that). Hot paths should prefer key-codec bytes over calling this per pair.
"""
from __future__ import annotations

import datetime
import decimal
import math
import re
import uuid
from typing import Any

from bson.binary import Binary
from bson.datetime_ms import DatetimeMS
from bson.dbref import DBRef
from bson.decimal128 import Decimal128
from bson.regex import Regex

from . import types as T

_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_TZ = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def _cmp(a: Any, b: Any) -> int:
    return (a > b) - (a < b)


def number_value(v: Any) -> int | float | decimal.Decimal:
    """A Python number that compares exactly with the others (Decimal only when needed)."""
    if isinstance(v, Decimal128):
        return v.to_decimal()
    return v


def compare_numbers(a: Any, b: Any) -> int:
    """NaN sorts below every other number and equals NaN, as in MongoDB."""
    a, b = number_value(a), number_value(b)
    a_nan = a != a
    b_nan = b != b
    if a_nan or b_nan:
        return (not a_nan) - (not b_nan)
    if isinstance(a, decimal.Decimal) or isinstance(b, decimal.Decimal):
        if isinstance(a, float):
            a = decimal.Decimal(a)
        if isinstance(b, float):
            b = decimal.Decimal(b)
    return _cmp(a, b)


def date_millis(v: Any) -> int:
    """Milliseconds since the epoch for datetime/DatetimeMS values."""
    if isinstance(v, DatetimeMS):
        return int(v)
    if v.tzinfo is None:
        delta = v - _EPOCH
    else:
        delta = v - _EPOCH_TZ
    return (delta.days * 86400 + delta.seconds) * 1000 + delta.microseconds // 1000


def binary_parts(v: Any) -> tuple[int, int, bytes]:
    """(length, subtype, bytes): MongoDB compares BinData by length first, then subtype."""
    if isinstance(v, uuid.UUID):
        return 16, 4, v.bytes
    if isinstance(v, Binary):
        return len(v), v.subtype, bytes(v)
    return len(v), 0, bytes(v)


def regex_parts(v: Any) -> tuple[str, str]:
    if isinstance(v, re.Pattern):
        v = Regex.from_native(v)
    flags = v.flags if isinstance(v.flags, str) else _flags_to_str(v.flags)
    return v.pattern, "".join(sorted(flags))


def _flags_to_str(flags: int) -> str:
    out = ""
    for ch, bit in (("i", re.I), ("l", re.L), ("m", re.M), ("s", re.S), ("u", re.U), ("x", re.X)):
        if flags & bit:
            out += ch
    return out


def object_items(v: Any) -> list[tuple[str, Any]]:
    if isinstance(v, DBRef):
        return list(v.as_doc().items())
    return list(v.items())


def compare(a: Any, b: Any) -> int:
    """-1, 0 or 1 by MongoDB's BSON comparison order (no collation)."""
    ba, bb = T.bracket(a), T.bracket(b)
    if ba != bb:
        return -1 if ba < bb else 1
    if ba == T.BRACKET_NUMBER:
        return compare_numbers(a, b)
    if ba == T.BRACKET_STRING:
        return _cmp(a, b)
    if ba == T.BRACKET_OBJECT:
        return _compare_items(object_items(a), object_items(b))
    if ba == T.BRACKET_ARRAY:
        return _compare_arrays(a, b)
    if ba == T.BRACKET_BINARY:
        return _cmp(binary_parts(a), binary_parts(b))
    if ba == T.BRACKET_OBJECTID:
        return _cmp(a.binary, b.binary)
    if ba == T.BRACKET_BOOL:
        return _cmp(bool(a), bool(b))
    if ba == T.BRACKET_DATE:
        return _cmp(date_millis(a), date_millis(b))
    if ba == T.BRACKET_TIMESTAMP:
        return _cmp((a.time, a.inc), (b.time, b.inc))
    if ba == T.BRACKET_REGEX:
        return _cmp(regex_parts(a), regex_parts(b))
    if ba in (T.BRACKET_CODE, T.BRACKET_CODE_WSCOPE):
        c = _cmp(str(a), str(b))
        if c or ba == T.BRACKET_CODE:
            return c
        return _compare_items(list(a.scope.items()), list(b.scope.items()))
    return 0  # MinKey, MaxKey, null, undefined: one value each


def _compare_items(xs: list[tuple[str, Any]], ys: list[tuple[str, Any]]) -> int:
    for (ka, va), (kb, vb) in zip(xs, ys):
        c = _cmp(T.bracket(va), T.bracket(vb))
        if c:
            return c
        c = _cmp(ka, kb)
        if c:
            return c
        c = compare(va, vb)
        if c:
            return c
    return _cmp(len(xs), len(ys))


def _compare_arrays(xs: Any, ys: Any) -> int:
    for va, vb in zip(xs, ys):
        c = compare(va, vb)
        if c:
            return c
    return _cmp(len(xs), len(ys))


def values_equal(a: Any, b: Any) -> bool:
    """Equality as $eq sees it: 1 == 1.0 == NumberLong(1), field order matters in objects."""
    return compare(a, b) == 0


def is_finite_number(v: Any) -> bool:
    v = number_value(v)
    if isinstance(v, decimal.Decimal):
        return v.is_finite()
    return not (isinstance(v, float) and (math.isinf(v) or math.isnan(v)))
