"""$bitsAllSet, $bitsAnySet, $bitsAllClear, $bitsAnyClear.

Operands: a non-negative integer mask, an array of bit positions, or BinData (little-endian
bytes). Numbers are tested as 64-bit two's complement (bits above 63 read the sign bit);
doubles must be integral and within 64 bits; BinData values are zero-extended.
"""
from __future__ import annotations

import decimal
import math
from collections.abc import Callable, Mapping
from typing import Any

from bson.binary import Binary
from bson.decimal128 import Decimal128
from bson.int64 import Int64

from ginkgodb.errors import CommandError, ErrorCode

from .context import ParseContext
from .describe import describe_element
from .nodes import Node, leaf
from .numbers import INT64_MAX, INT64_MIN, is_bson_number, parse_non_negative_int, parse_non_negative_long

MASK64 = (1 << 64) - 1
ALL_SET, ANY_SET, ALL_CLEAR, ANY_CLEAR = "$bitsAllSet", "$bitsAnySet", "$bitsAllClear", \
    "$bitsAnyClear"


def parse_bits(ctx: ParseContext, path: str | None, op: str, arg: Any, spec: Mapping) -> Node:
    if type(arg) is list:
        positions = [_bit_position(i, x) for i, x in enumerate(arg)]
        mask = 0
        for p in positions:
            mask |= 1 << min(p, 63)
    elif is_bson_number(arg):
        mask = parse_non_negative_long(op, arg)
        positions = [b for b in range(64) if mask >> b & 1]
    elif isinstance(arg, (bytes, Binary)):
        mask, positions = _binary_mask(bytes(arg))
    else:
        raise CommandError(ErrorCode.BadValue, f"{path or ''} takes an Array, a number, or a "
                                               f"BinData but received: {describe_element(op, arg)}")
    return leaf(path, bits_predicate(op, mask, positions))


def _bit_position(index: int, x: Any) -> int:
    """An array entry: its element name (the index) appears in mongod's message."""
    try:
        return parse_non_negative_int(str(index), x)
    except CommandError as exc:
        raise CommandError(ErrorCode.BadValue,
                           f"Failed to parse bit position. {exc.errmsg}") from None


def _binary_mask(data: bytes) -> tuple[int, list[int]]:
    """mongod's mask from BinData: bytes are sign-extended chars, bytes past 8 set bit 63."""
    mask = 0
    positions = []
    for i, byte in enumerate(data):
        if not byte:
            continue
        if i < 8:
            signed = byte - 256 if byte >= 128 else byte
            mask |= (signed << (8 * i)) & MASK64
        else:
            mask |= 1 << 63
        positions.extend(8 * i + b for b in range(8) if byte >> b & 1)
    return mask, positions


def bits_predicate(op: str, mask: int, positions: list[int]) -> Callable[[Any], bool]:
    number_test = _number_test(op, mask)
    binary_test = _binary_test(op, positions)

    def bits_match(v: Any) -> bool:
        t = type(v)
        if t is int or t is Int64:
            return number_test(v & MASK64)
        if t is float or t is Decimal128:
            n = _integral_value(v)
            return n is not None and number_test(n & MASK64)
        if t is bytes or t is Binary:
            return binary_test(bytes(v))
        return False

    return bits_match


def _integral_value(v: Any) -> int | None:
    """A double that is an exact 64-bit integer (else no match); decimals round half-even."""
    if type(v) is float:
        if math.isnan(v) or v >= 2.0**63 or v < -(2.0**63) or v != math.trunc(v):
            return None
        return int(v)
    d = v.to_decimal()
    if not d.is_finite():
        return None
    n = int(d.to_integral_value(rounding=decimal.ROUND_HALF_EVEN))
    return n if INT64_MIN <= n <= INT64_MAX else None


def _number_test(op: str, mask: int) -> Callable[[int], bool]:
    if op == ALL_SET:
        return lambda n: n & mask == mask
    if op == ANY_SET:
        return lambda n: n & mask != 0
    if op == ALL_CLEAR:
        return lambda n: n & mask == 0
    return lambda n: n & mask != mask


def _binary_test(op: str, positions: list[int]) -> Callable[[bytes], bool]:
    want_set = op in (ALL_SET, ANY_SET)
    want_all = op in (ALL_SET, ALL_CLEAR)

    def test(data: bytes) -> bool:
        size = len(data) * 8
        for p in positions:
            is_set = p < size and bool(data[p >> 3] >> (p & 7) & 1)
            if is_set != want_set and want_all:
                return False
            if is_set == want_set and not want_all:
                return True
        return want_all

    return test
