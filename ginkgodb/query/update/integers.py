"""Integer arguments ($slice, $position, $pop) parsed like mongod's parseIntegerElementToLong."""
from __future__ import annotations

import math
from typing import Any

from bson.decimal128 import Decimal128

from ginkgodb.errors import CommandError, ErrorCode

from . import numeric
from .render import render_element

_LONG_MIN, _LONG_LIMIT = -(2**63), 2**63


def parse_long(name: str, value: Any) -> int:
    """An integral number as a Python int; FailedToParse (9) otherwise."""
    k = numeric.kind(value)
    if k is None:
        raise _fail(f"Expected a number in: {render_element(name, value)}")
    if k == numeric.DOUBLE:
        if math.isnan(value):
            raise _fail(f"Expected an integer, but found NaN in: {render_element(name, value)}")
        if not _LONG_MIN <= value < _LONG_LIMIT:
            raise _fail(f"Cannot represent as a 64-bit integer: {render_element(name, value)}")
        if value != int(value):
            raise _fail(f"Expected an integer: {render_element(name, value)}")
        return int(value)
    if k == numeric.DECIMAL:
        return _decimal_to_long(name, value)
    return int(value)


def _decimal_to_long(name: str, value: Decimal128) -> int:
    d = value.to_decimal()
    if d.is_nan():
        raise _fail(f"Expected an integer, but found NaN in: {render_element(name, value)}")
    if d.is_infinite() or not _LONG_MIN <= d < _LONG_LIMIT:
        raise _fail(f"Cannot represent as a 64-bit integer: {render_element(name, value)}")
    if d != d.to_integral_value():
        raise _fail(f"Expected an integer: {render_element(name, value)}")
    return int(d)


def _fail(message: str) -> CommandError:
    return CommandError(ErrorCode.FailedToParse, message)
