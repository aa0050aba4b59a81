"""Integer arguments parsed as mongod parses them ($size, bit masks, $type codes, $mod).

Each function raises CommandError with mongod's code and wording (the element is printed the way
mongod prints it, e.g. `Expected an integer: $size: 1.5`).
"""
from __future__ import annotations

import decimal
import math
from typing import Any

from bson.decimal128 import Decimal128

from ginkgodb.bsonutil.types import is_bson_number
from ginkgodb.errors import CommandError, ErrorCode

from .describe import describe_element

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def parse_long(name: str, v: Any) -> int:
    """parseIntegerElementToLong: a whole number that fits in 64 bits (FailedToParse if not)."""
    element = describe_element(name, v)
    if not is_bson_number(v):
        raise CommandError(ErrorCode.FailedToParse, f"Expected a number in: {element}")
    if type(v) is float:
        if math.isnan(v):
            raise CommandError(ErrorCode.FailedToParse,
                               f"Expected an integer, but found NaN in: {element}")
        if v >= 2.0**63 or v < -(2.0**63):
            raise CommandError(ErrorCode.FailedToParse,
                               f"Cannot represent as a 64-bit integer: {element}")
        if v != math.trunc(v):
            raise CommandError(ErrorCode.FailedToParse, f"Expected an integer: {element}")
        return int(v)
    if type(v) is Decimal128:
        d = v.to_decimal()
        if not d.is_finite() or d != d.to_integral_value() or not INT64_MIN <= d <= INT64_MAX:
            raise CommandError(ErrorCode.FailedToParse,
                               f"Cannot represent as a 64-bit integer: {element}")
        return int(d)
    return int(v)


def parse_non_negative_long(name: str, v: Any) -> int:
    n = parse_long(name, v)
    if n < 0:
        raise CommandError(ErrorCode.FailedToParse,
                           f"Expected a positive number in: {describe_element(name, v)}")
    return n


def parse_int(name: str, v: Any) -> int:
    n = parse_long(name, v)
    if not INT32_MIN <= n <= INT32_MAX:
        raise CommandError(ErrorCode.FailedToParse,
                           f"Cannot represent {describe_element(name, v)} in an int")
    return n


def parse_non_negative_int(name: str, v: Any) -> int:
    n = parse_int(name, v)
    if n < 0:
        raise CommandError(ErrorCode.FailedToParse,
                           f"Expected a positive number in: {describe_element(name, v)}")
    return n


def coerce_long(v: Any) -> int:
    """BSONElement::tryCoerce to a long: truncates; NaN/Inf and out-of-range are errors.

    Raises ValueError with mongod's reason text; callers add their own context.
    """
    if type(v) is float:
        if not math.isfinite(v):
            raise ValueError("Unable to coerce NaN/Inf to integral type")
        t = math.trunc(v)
    elif type(v) is Decimal128:
        d = v.to_decimal()
        if not d.is_finite():
            raise ValueError("Unable to coerce NaN/Inf to integral type")
        t = int(d.to_integral_value(rounding=decimal.ROUND_DOWN))
    else:
        t = int(v)
    if not INT64_MIN <= t <= INT64_MAX:
        raise ValueError("Out of bounds coercing to integral value")
    return t


def truncate_to_long(v: Any) -> int | None:
    """A document number truncated toward zero, or None when that is not a 64-bit integer."""
    try:
        return coerce_long(v)
    except ValueError:
        return None
