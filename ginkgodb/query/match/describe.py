"""Operands printed the way mongod prints a BSONElement in its error messages.

`describe_element("$size", 1.5)` gives `$size: 1.5`; doubles keep a `.0` (`3.0`), strings are
quoted, documents look like `{ a: 1 }`. Only error text depends on this module.
"""
from __future__ import annotations

from typing import Any

from bson.decimal128 import Decimal128

from ginkgodb.bsonutil.shell_format import Style, double_nice, format_element, quoted

MATCH = Style(double_nice, quoted)


def describe_element(name: str, value: Any) -> str:
    """`name: value`, as BSONElement::toString(includeFieldName=true) writes it."""
    return format_element(name, value, MATCH)


def number_g(x: Any) -> str:
    """A number streamed as a C++ double ('%g'), as in "Invalid numerical type code: 1.5"."""
    if isinstance(x, Decimal128):
        x = float(x.to_decimal())
    return f"{float(x):g}"
