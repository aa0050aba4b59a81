"""Numeric folds shared by accumulator expressions ($sum over an array) and $group."""
from __future__ import annotations

import decimal
import math
from collections.abc import Iterable
from typing import Any

from bson.decimal128 import Decimal128

from .ops_logic import cmp_values
from .values import DEC_CTX, DECIMAL, DOUBLE, INT, LONG, fsum, make_dec, make_int, nullish, num_kind

_ZERO = decimal.Decimal(0)


class Summer:
    """A running sum with mongod's result typing; non-numbers are ignored."""

    __slots__ = ("kind", "ints", "floats", "dec", "count", "longs", "exact")

    def __init__(self, exact: bool = False) -> None:
        """`exact`: average longs exactly ($group); the expression form converts them to
        doubles first, as mongod does."""
        self.kind, self.ints, self.floats, self.dec, self.count = INT, 0, [], None, 0
        self.longs: list[int] = []
        self.exact = exact

    def push(self, v: Any) -> None:
        t = type(v)
        if t is int:
            self.ints += v
            self.count += 1
            if self.kind == INT and not -2147483648 <= v <= 2147483647:
                self.kind = LONG
            return
        if t is float:
            self.floats.append(v)
            self.count += 1
            if self.kind < DOUBLE:
                self.kind = DOUBLE
            return
        k = num_kind(v)
        if k < 0:
            return
        self.count += 1
        if k == LONG:
            self.ints += v
            self.longs.append(v)
            if self.kind < LONG:
                self.kind = LONG
        else:
            d = v.to_decimal()
            self.dec = d if self.dec is None else DEC_CTX.add(self.dec, d)
            self.kind = DECIMAL

    def total(self) -> Any:
        if self.kind == DECIMAL:
            return make_dec(self._decimal_total())
        if self.kind == DOUBLE:
            return fsum([*self.floats, self.ints]) if self.ints else fsum(self.floats)
        return make_int(self.ints, self.kind)

    def _decimal_total(self) -> decimal.Decimal:
        """Decimal sum as mongod's accumulators form it: from 0, doubles converted exactly."""
        total = DEC_CTX.add(_ZERO, self.dec)
        if self.floats:
            part = fsum([*self.floats, float(self.ints)])
            total = DEC_CTX.add(total, DEC_CTX.create_decimal(decimal.Decimal(part))
                                if math.isfinite(part) else decimal.Decimal(part))
        elif self.ints:
            total = DEC_CTX.add(total, decimal.Decimal(self.ints))
        return total

    def average(self) -> Any:
        if not self.count:
            return None
        if self.kind == DECIMAL:
            return make_dec(DEC_CTX.divide(self._decimal_total(), decimal.Decimal(self.count)))
        if self.kind == DOUBLE:
            return fsum([*self.floats, self.ints]) / self.count
        if self.longs and not self.exact:
            int32_part = self.ints - sum(self.longs)
            return fsum([*map(float, self.longs), float(int32_part)]) / self.count
        return self.ints / self.count


def sum_values(values: Iterable[Any]) -> Any:
    s = Summer()
    for v in values:
        s.push(v)
    return s.total()


def avg_values(values: Iterable[Any]) -> Any:
    s = Summer()
    for v in values:
        s.push(v)
    return s.average()


def extreme(values: Iterable[Any], sign: int) -> Any:
    """The minimum (sign=-1) or maximum (sign=1) ignoring null and missing; null if none."""
    best = None
    found = False
    for v in values:
        if nullish(v):
            continue
        if not found or cmp_values(v, best) * sign > 0:
            best, found = v, True
    return best


class StdDev:
    """Welford's running variance over numeric inputs (non-numbers ignored)."""

    __slots__ = ("n", "mean", "m2")

    def __init__(self) -> None:
        self.n, self.mean, self.m2 = 0, 0.0, 0.0

    def add(self, v: Any) -> None:
        k = num_kind(v)
        if k < 0:
            return
        x = float(v.to_decimal()) if k == DECIMAL else float(v)
        self.n += 1
        delta = x - self.mean
        self.mean += delta / self.n
        self.m2 += delta * (x - self.mean)

    def result(self, sample: bool) -> Any:
        if self.n == 0 or (sample and self.n < 2):
            return None
        return math.sqrt(self.m2 / (self.n - 1 if sample else self.n))


def std_dev(values: Iterable[Any], sample: bool) -> Any:
    acc = StdDev()
    for v in values:
        acc.add(v)
    return acc.result(sample)


def is_decimal(v: Any) -> bool:
    return type(v) is Decimal128
