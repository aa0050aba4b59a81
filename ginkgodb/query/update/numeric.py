"""Arithmetic with BSON's numeric type rules (mongod's SafeNum) for $inc, $mul and $bit.

Types widen int32 < int64 < double < decimal128. An int32 result that overflows becomes int64;
an int64 overflow has no representation and is reported by returning None. int32 values are
plain Python ints; int64 results are `Int64` so they re-encode as BSON longs.
"""
from __future__ import annotations

import decimal
import math
from typing import Any

from bson.decimal128 import Decimal128, create_decimal128_context
from bson.int64 import Int64

INT32, INT64, DOUBLE, DECIMAL = 1, 2, 3, 4

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_DEC_CTX = create_decimal128_context()

_KIND_NAMES = {INT32: "NumberInt", INT64: "NumberLong", DOUBLE: "NumberDouble",
               DECIMAL: "NumberDecimal"}


def kind(v: Any) -> int | None:
    """The numeric BSON type of `v`, or None when `v` is not a number."""
    t = type(v)
    if t is int:
        return INT32 if _INT32_MIN <= v <= _INT32_MAX else INT64
    if t is Int64:
        return INT64
    if t is float:
        return DOUBLE
    if t is Decimal128:
        return DECIMAL
    return None


def make(k: int, value: Any) -> Any:
    """A Python value of numeric kind `k`; None when an integer does not fit its kind."""
    if k == INT32:
        if _INT32_MIN <= value <= _INT32_MAX:
            return int(value)
        k = INT64
    if k == INT64:
        return Int64(value) if _INT64_MIN <= value <= _INT64_MAX else None
    if k == DOUBLE:
        return float(value)
    return Decimal128(_DEC_CTX.create_decimal(value))


def to_decimal(v: Any) -> decimal.Decimal:
    """Decimal value as mongod widens it: doubles round to 15 significant digits."""
    if isinstance(v, Decimal128):
        return v.to_decimal()
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return decimal.Decimal(v)
        return decimal.Decimal(f"{v:.14e}")  # 15 significant digits, trailing zeros kept
    return decimal.Decimal(int(v))


def add(a: Any, b: Any) -> Any:
    return _arith(a, b, "add")


def multiply(a: Any, b: Any) -> Any:
    return _arith(a, b, "mul")


def _arith(a: Any, b: Any, op: str) -> Any:
    if type(a) is int and type(b) is int and _INT32_MIN <= a <= _INT32_MAX and _INT32_MIN <= b <= _INT32_MAX:
        r = a + b if op == "add" else a * b   # two int32s (a counter's $inc): int32, else int64
        return r if _INT32_MIN <= r <= _INT32_MAX else Int64(r)
    ka, kb = kind(a), kind(b)
    k = max(ka, kb)
    if k == DECIMAL:
        x, y = to_decimal(a), to_decimal(b)
        r = _DEC_CTX.add(x, y) if op == "add" else _DEC_CTX.multiply(x, y)
        return Decimal128(r)
    if k == DOUBLE:
        x, y = float(a), float(b)
        return x + y if op == "add" else x * y
    r = int(a) + int(b) if op == "add" else int(a) * int(b)
    if k == INT32 and not _INT32_MIN <= r <= _INT32_MAX:
        k = INT64
    return make(k, r)


def bitwise(a: Any, b: Any, op: str) -> Any:
    """and/or/xor of two integers (int32 or int64); the result widens like arithmetic."""
    x, y = int(a), int(b)
    r = x & y if op == "and" else x | y if op == "or" else x ^ y
    return make(max(kind(a), kind(b)), r)


def identical(a: Any, b: Any) -> bool:
    """Same numeric type and same value (mongod's SafeNum::isIdentical)."""
    ka = kind(a)
    if ka != kind(b):
        return False
    if ka == DECIMAL:
        x, y = a.to_decimal(), b.to_decimal()
        return x == y or (x.is_nan() and y.is_nan())
    return a == b or (ka == DOUBLE and math.isnan(a) and math.isnan(b))


def debug_string(v: Any) -> str:
    """`(NumberInt)42`, as mongod prints the operand of a failed $inc."""
    k = kind(v)
    text = str(v) if k != DOUBLE else repr(v)
    return f"({_KIND_NAMES.get(k, 'EOO')}){text}"
