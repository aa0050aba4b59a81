"""$bucketAuto granularities: powers of two and the preferred number series (Renard, E)."""
from __future__ import annotations

import bisect
import math
from typing import Any

from ginkgodb.errors import CommandError, ErrorCode
from ginkgodb.query.expr.values import num_kind, to_double, type_name

SERIES = {
    "R5": [1.0, 1.6, 2.5, 4.0, 6.3],
    "R10": [1.0, 1.25, 1.6, 2.0, 2.5, 3.15, 4.0, 5.0, 6.3, 8.0],
    "R20": [1.0, 1.12, 1.25, 1.4, 1.6, 1.8, 2.0, 2.24, 2.5, 2.8, 3.15, 3.55, 4.0, 4.5, 5.0, 5.6,
            6.3, 7.1, 8.0, 9.0],
    "R40": [1.0, 1.06, 1.12, 1.18, 1.25, 1.32, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9, 2.0, 2.12, 2.24,
            2.36, 2.5, 2.65, 2.8, 3.0, 3.15, 3.35, 3.55, 3.75, 4.0, 4.25, 4.5, 4.75, 5.0, 5.3,
            5.6, 6.0, 6.3, 6.7, 7.1, 7.5, 8.0, 8.5, 9.0, 9.5],
    "1-2-5": [1.0, 2.0, 5.0],
    "E6": [1.0, 1.5, 2.2, 3.3, 4.7, 6.8],
    "E12": [1.0, 1.2, 1.5, 1.8, 2.2, 2.7, 3.3, 3.9, 4.7, 5.6, 6.8, 8.2],
    "E24": [1.0, 1.1, 1.2, 1.3, 1.5, 1.6, 1.8, 2.0, 2.2, 2.4, 2.7, 3.0, 3.3, 3.6, 3.9, 4.3, 4.7,
            5.1, 5.6, 6.2, 6.8, 7.5, 8.2, 9.1],
}
KNOWN = set(SERIES) | {"POWERSOF2", "R80", "E48", "E96", "E192"}


class Rounder:
    """Rounds bucket boundaries up/down to the next granularity value (strictly)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.series = SERIES.get(name)

    def check(self, v: Any) -> None:
        if num_kind(v) < 0:
            raise CommandError(ErrorCode.GranularityNonNumericValue,
                               "$bucketAuto can specify a 'granularity' with numeric "
                               f"boundaries only, but found a value with type: "
                               f"{type_name(v)}")
        x = to_double(v)
        if math.isnan(x):
            raise CommandError(ErrorCode.GranularityNaNValue,
                               "$bucketAuto can specify a 'granularity' with numeric "
                               "boundaries only, but found a NaN value")
        if x < 0:
            raise CommandError(ErrorCode.GranularityNegativeValue,
                               "$bucketAuto can specify a 'granularity' with numeric "
                               f"boundaries only, but found a negative value: {x:g}")

    def up(self, v: Any) -> Any:
        x = to_double(v)
        if self.series is None:
            return 1.0 if x == 0 else 2.0 ** (math.floor(math.log2(x)) + 1)
        if x == 0:
            return 0.0
        exp = math.floor(math.log10(x))
        mant = x / 10 ** exp
        i = bisect.bisect_right(self.series, mant * (1 + 1e-12))
        if i == len(self.series):
            return self.series[0] * 10 ** (exp + 1)
        return _clean(self.series[i] * 10 ** exp)

    def down(self, v: Any) -> Any:
        x = to_double(v)
        if x == 0:
            return 0.0
        if self.series is None:
            return 2.0 ** (math.ceil(math.log2(x)) - 1)
        exp = math.floor(math.log10(x))
        mant = x / 10 ** exp
        i = bisect.bisect_left(self.series, mant * (1 - 1e-12)) - 1
        if i < 0:
            return _clean(self.series[-1] * 10 ** (exp - 1))
        return _clean(self.series[i] * 10 ** exp)


def _clean(x: float) -> float:
    return float(f"{x:.12g}")


def rounder(name: Any) -> Rounder:
    if not isinstance(name, str):
        raise CommandError(ErrorCode.GranularityNotString,
                           "The $bucketAuto 'granularity' field must be a string, but "
                           f"found type: {type_name(name)}.")
    if name not in KNOWN:
        raise CommandError(ErrorCode.UnknownGranularity, f"Unknown rounding granularity '{name}'")
    if name not in SERIES and name != "POWERSOF2":
        raise CommandError(ErrorCode.NotImplemented, f"granularity '{name}' is not supported")
    return Rounder(name)
