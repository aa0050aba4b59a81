"""Aggregation expressions: `compile_expr(spec)` turns a spec into `expr(doc, variables)`.

Used by $expr in filters, pipeline-style updates, find projections and every pipeline stage.
A missing field evaluates to `MISSING`, which is distinct from None (null).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from . import (  # noqa: F401
    ops_accum,
    ops_arith,
    ops_array,
    ops_convert,
    ops_date,
    ops_higher,
    ops_logic,
    ops_math,
    ops_object,
    ops_regex,
    ops_set,
    ops_string,
    ops_type,
    percentile,
)
from .compiler import OPERATORS, Scope, compile_node
from .values import MISSING, nullish, truthy

Expr = Callable[..., Any]

__all__ = ["compile_expr", "MISSING", "Expr", "truthy", "nullish", "OPERATORS"]


def compile_expr(spec: Any, *, allow_vars: bool = True,
                 known_vars: Iterable[str] | None = None) -> Expr:
    """Compile an aggregation expression once; call the result as `expr(doc, variables=None)`.

    With `allow_vars` (the default) a `$$name` not bound inside the expression is looked up in
    `variables` at evaluation time (the command's `let`); without it, only `known_vars` and names
    bound by $let/$map/$filter/$reduce may be used, as mongod checks at parse time.
    """
    scope = Scope(known_vars or (), open_=allow_vars and known_vars is None)
    fn = compile_node(spec, scope)

    def expr(doc: Any, variables: dict | None = None) -> Any:
        return fn(doc, variables)
    expr.fn = fn  # type: ignore[attr-defined]
    return expr
