"""$percentile and $median, as expressions over arrays and (via the pipeline) accumulators.

Non-numeric inputs are ignored. 'approximate' and 'discrete' pick the value at rank
ceil(p * n) of the sorted inputs (exact for the data sizes ginkgodb holds in memory);
'continuous' interpolates linearly between neighbouring ranks.
"""
from __future__ import annotations

import math
from typing import Any

from ginkgodb.errors import CommandError, ErrorCode

from .compiler import Fn, Scope, compile_node, operator, reject_unknown_fields
from .values import DECIMAL, bson_repr, num_kind, type_name

METHODS = ("approximate", "discrete", "continuous")


def parse_spec(name: str, arg: Any, scope: Scope) -> tuple[Fn, list[float] | None, str]:
    """(input expression, p values or None for $median, method)."""
    if not isinstance(arg, dict):
        raise CommandError(ErrorCode.TypeMismatch, f"{name} must be an object, found "
                                                   f"{type_name(arg)}")
    allowed = ("input", "method") if name == "$median" else ("input", "p", "method")
    reject_unknown_fields(name, arg, allowed)
    for key in allowed:
        if key not in arg:
            raise CommandError(ErrorCode.IDLFailedToParse, f"BSON field '{name}.{key}' is "
                                                           "missing but a required field")
    method = arg["method"]
    if method not in METHODS or type(method) is not str:
        raise CommandError(ErrorCode.BadValue, f"Currently only 'approximate', 'discrete' and "
                                               f"'continuous' can be used as percentile "
                                               f"'method', found {bson_repr(method)}")
    ps = None if name == "$median" else _p_values(arg["p"])
    return compile_node(arg["input"], scope), ps, method


def _p_values(p: Any) -> list[float]:
    if type(p) is not list or not p:
        raise CommandError(ErrorCode.PercentilePNotArrayOfNumbers,
                           "The $percentile 'p' field must be an array of numbers from "
                           f"[0.0, 1.0], but found: {bson_repr(p)}")
    out = []
    for v in p:
        if num_kind(v) < 0:
            raise CommandError(ErrorCode.PercentilePNotArrayOfNumbers,
                               "The $percentile 'p' field must be an array of numbers "
                               f"from [0.0, 1.0], but found: {bson_repr(p)}")
        x = float(v.to_decimal()) if num_kind(v) == DECIMAL else float(v)
        if not 0.0 <= x <= 1.0:
            raise CommandError(ErrorCode.PercentilePValueOutOfRange,
                               "The $percentile 'p' field must be an array of numbers "
                               f"from [0.0, 1.0], but found: {bson_repr(v)}")
        out.append(x)
    return out


def numeric_values(values: Any) -> list[float]:
    out = []
    for v in values:
        k = num_kind(v)
        if k >= 0:
            x = float(v.to_decimal()) if k == DECIMAL else float(v)
            if not math.isnan(x):
                out.append(x)
    return out


def percentiles(values: list[float], ps: list[float], method: str) -> list[float] | None:
    if not values:
        return None
    data = sorted(values)
    n = len(data)
    out = []
    for p in ps:
        if method == "continuous":
            pos = p * (n - 1)
            lo = math.floor(pos)
            hi = min(lo + 1, n - 1)
            out.append(data[lo] + (data[hi] - data[lo]) * (pos - lo))
        else:
            rank = max(1, math.ceil(p * n))
            out.append(data[min(rank, n) - 1])
    return out


def finish(name: str, values: list[float], ps: list[float] | None, method: str) -> Any:
    result = percentiles(values, ps or [0.5], method)
    if name == "$median":
        return None if result is None else result[0]
    return result


def _operator(name: str) -> None:
    @operator(name)
    def parse(spec: Any, scope: Scope) -> Fn:
        inp, ps, method = parse_spec(name, spec, scope)

        def ev(doc: Any, vars: Any) -> Any:
            v = inp(doc, vars)
            return finish(name, numeric_values(v if type(v) is list else [v]), ps, method)
        return ev


_operator("$percentile")
_operator("$median")
