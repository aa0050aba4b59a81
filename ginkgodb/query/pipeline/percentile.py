"""$percentile and $median as $group accumulators."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ginkgodb.query.expr import percentile as P
from ginkgodb.query.expr.compiler import Fn, Scope
from ginkgodb.query.expr.values import DECIMAL, num_kind


class _Percentile:
    __slots__ = ("fn", "name", "ps", "method", "values")

    def __init__(self, fn: Fn, name: str, ps: list[float] | None, method: str) -> None:
        self.fn, self.name, self.ps, self.method = fn, name, ps, method
        self.values: list[float] = []

    def add(self, doc: Any, vars: Any) -> None:
        v = self.fn(doc, vars)
        k = num_kind(v)
        if k >= 0:
            x = float(v.to_decimal()) if k == DECIMAL else float(v)
            if x == x:
                self.values.append(x)

    def result(self) -> Any:
        return P.finish(self.name, self.values, self.ps, self.method)


def parse_percentile(name: str, arg: Any, scope: Scope) -> Callable[[Any, Any], Any]:
    fn, ps, method = P.parse_spec(name, arg, scope)
    return lambda gid, vars: _Percentile(fn, name, ps, method)
