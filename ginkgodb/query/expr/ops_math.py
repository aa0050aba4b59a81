"""Trigonometry, bitwise and timestamp-part operators."""
from __future__ import annotations

import decimal
import math
from collections.abc import Callable
from typing import Any

from bson.int64 import Int64
from bson.timestamp import Timestamp

from ginkgodb.errors import CommandError, ErrorCode

from .compiler import Fn, nary
from .operands import numeric_unary, unary
from .values import DECIMAL, INT, LONG, int_or_long, make_dec, nullish, num_kind, number_str, type_name


def _trig(name: str, fn: Callable[[float], float], lo: float, hi: float, closed: bool) -> None:
    def compute(v: Any, k: int) -> Any:
        x = float(v.to_decimal()) if k == DECIMAL else float(v)
        if math.isnan(x):
            return v if k == DECIMAL else math.nan
        inside = lo <= x <= hi if closed else lo < x < hi
        if not inside:
            bounds = f"[{_b(lo)},{_b(hi)}]" if closed else f"({_b(lo)},{_b(hi)})"
            raise CommandError(ErrorCode.TrigValueOutOfBounds,
                               f"cannot apply {name} to {number_str(v)}, value must "
                               f"in {bounds}")
        r = fn(x)
        return make_dec(decimal.Decimal(repr(r))) if k == DECIMAL else r
    numeric_unary(name, compute)


def _b(x: float) -> str:
    return "inf" if x == math.inf else "-inf" if x == -math.inf else number_str(x)


for _name, _fn, _lo, _hi, _closed in (
        ("$sin", math.sin, -math.inf, math.inf, False), ("$cos", math.cos, -math.inf, math.inf, False),
        ("$tan", math.tan, -math.inf, math.inf, False), ("$asin", math.asin, -1.0, 1.0, True),
        ("$acos", math.acos, -1.0, 1.0, True), ("$atan", math.atan, -math.inf, math.inf, True),
        ("$sinh", math.sinh, -math.inf, math.inf, True), ("$cosh", math.cosh, -math.inf, math.inf, True),
        ("$tanh", math.tanh, -math.inf, math.inf, True), ("$asinh", math.asinh, -math.inf, math.inf, True),
        ("$acosh", math.acosh, 1.0, math.inf, True), ("$atanh", math.atanh, -1.0, 1.0, True),
        ("$degreesToRadians", math.radians, -math.inf, math.inf, True),
        ("$radiansToDegrees", math.degrees, -math.inf, math.inf, True)):
    _trig(_name, _fn, _lo, _hi, _closed)


@nary("$atan2", 2, 2)
def _atan2(args: list[Fn]) -> Fn:
    a, b = args

    def ev(doc: Any, vars: Any) -> Any:
        y, x = a(doc, vars), b(doc, vars)
        if nullish(y) or nullish(x):
            return None
        for v in (y, x):
            if num_kind(v) < 0:
                raise CommandError(ErrorCode.Atan2NonNumeric,
                                   f"$atan2 only supports numeric types, not {type_name(v)}")
        r = math.atan2(float(y.to_decimal()) if num_kind(y) == DECIMAL else float(y),
                       float(x.to_decimal()) if num_kind(x) == DECIMAL else float(x))
        return make_dec(decimal.Decimal(repr(r))) if DECIMAL in (num_kind(y), num_kind(x)) else r
    return ev


def _bitwise(name: str, op: Callable[[int, int], int], start: int) -> None:
    @nary(name)
    def build(args: list[Fn]) -> Fn:
        def ev(doc: Any, vars: Any) -> Any:
            acc, kind = start, INT
            for fn in args:
                v = fn(doc, vars)
                k = num_kind(v)
                if k not in (INT, LONG):
                    if nullish(v):
                        return None
                    raise CommandError(ErrorCode.TypeMismatch, f"{name} only supports int and "
                                                               "long operands.")
                kind = max(kind, k)
                acc = op(acc, int(v))
            return Int64(_wrap64(acc)) if kind == LONG else int_or_long(_wrap32(acc))
        return ev


def _wrap32(x: int) -> int:
    return (x + 2**31) % 2**32 - 2**31


def _wrap64(x: int) -> int:
    return (x + 2**63) % 2**64 - 2**63


_bitwise("$bitAnd", lambda a, b: a & b, -1)
_bitwise("$bitOr", lambda a, b: a | b, 0)
_bitwise("$bitXor", lambda a, b: a ^ b, 0)


@nary("$bitNot", 1, 1)
def _bit_not(args: list[Fn]) -> Fn:
    (arg,) = args

    def ev(doc: Any, vars: Any) -> Any:
        v = arg(doc, vars)
        k = num_kind(v)
        if k not in (INT, LONG):
            if nullish(v):
                return None
            raise CommandError(ErrorCode.TypeMismatch, "$bitNot only supports int and long "
                                                       "operands.")
        return Int64(~int(v)) if k == LONG else ~int(v)
    return ev


def _ts_part(name: str, part: Callable[[Timestamp], int]) -> None:
    @unary(name, lambda v: type(v) is Timestamp, ErrorCode.TimestampOperatorArgNotTimestamp,
           f"{name} expects argument of type timestamp but received ")
    def compute(v: Timestamp) -> Int64:
        return Int64(part(v))


_ts_part("$tsSecond", lambda ts: ts.time)
_ts_part("$tsIncrement", lambda ts: ts.inc)
