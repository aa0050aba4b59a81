"""$regex/$options, $mod, $expr, $sampleRate and the operators ginkgodb refuses ($where, $text).
"""
from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from bson.int64 import Int64
from bson.regex import Regex

from ginkgodb.errors import CommandError, ErrorCode

from .context import ParseContext
from .nodes import ConstNode, DocumentNode, Node, leaf
from .numbers import coerce_long, is_bson_number, truncate_to_long
from .regex import regex_operand, regex_predicate

# ---- $regex ---------------------------------------------------------------------------------

def parse_regex(ctx: ParseContext, path: str | None, arg: Any, spec: Mapping,
                in_sub: bool) -> Node:
    """{$regex, $options} read from the whole operator document (either order)."""
    pattern, options = "", ""
    for key, value in spec.items():
        if key == "$regex":
            if type(value) is str:
                pattern = value
            elif type(value) is Regex:
                pattern, flags = regex_operand(value)
                if flags:
                    if options:
                        raise CommandError(ErrorCode.RegexOptionsTwiceInRegex,
                                           "options set in both $regex and $options")
                    options = flags
            else:
                raise CommandError(ErrorCode.BadValue, "$regex has to be a string")
        elif key == "$options":
            if type(value) is not str:
                raise CommandError(ErrorCode.BadValue, "$options has to be a string")
            if options:
                raise CommandError(ErrorCode.RegexOptionsTwiceInOptions,
                                   "options set in both $regex and $options")
            options = value
    return leaf(path, regex_predicate(pattern, options))


def parse_options(ctx: ParseContext, path: str | None, arg: Any, spec: Mapping,
                  in_sub: bool) -> Node | None:
    """$options is consumed by its sibling $regex; alone it is an error."""
    if "$regex" in spec:
        return None
    raise CommandError(ErrorCode.BadValue, "$options needs a $regex")


# ---- $mod -----------------------------------------------------------------------------------

def parse_mod(ctx: ParseContext, path: str | None, arg: Any, spec: Mapping,
              in_sub: bool) -> Node:
    if type(arg) is not list:
        raise CommandError(ErrorCode.BadValue, "malformed mod, needs to be an array")
    if len(arg) < 1:
        raise CommandError(ErrorCode.BadValue, "malformed mod, not enough elements")
    if not is_bson_number(arg[0]):
        raise CommandError(ErrorCode.BadValue, "malformed mod, divisor not a number")
    if len(arg) < 2:
        raise CommandError(ErrorCode.BadValue, "malformed mod, not enough elements")
    if not is_bson_number(arg[1]):
        raise CommandError(ErrorCode.BadValue, "malformed mod, remainder not a number")
    if len(arg) > 2:
        raise CommandError(ErrorCode.BadValue, "malformed mod, too many elements")
    divisor = _mod_argument(arg[0], "divisor")
    remainder = _mod_argument(arg[1], "remainder")
    if divisor == 0:
        raise CommandError(ErrorCode.BadValue, "divisor cannot be 0")
    return leaf(path, mod_predicate(divisor, remainder))


def _mod_argument(v: Any, role: str) -> int:
    try:
        return coerce_long(v)
    except ValueError as exc:
        raise CommandError(ErrorCode.BadValue,
                           f"malformed mod, {role} value is invalid :: caused by :: {exc}") from None


def mod_predicate(divisor: int, remainder: int) -> Any:
    """Numbers truncated toward zero; C's remainder (sign of the dividend); NaN/inf never match."""
    abs_divisor = abs(divisor)

    def mod_matches(v: Any) -> bool:
        t = type(v)
        if t is int or t is Int64:
            n = v
        elif t is float or is_bson_number(v):
            n = truncate_to_long(v)
            if n is None:
                return False
        else:
            return False
        r = abs(n) % abs_divisor
        return (-r if n < 0 else r) == remainder

    return mod_matches


# ---- whole-document operators ----------------------------------------------------------------

def parse_expr(ctx: ParseContext, name: str, arg: Any, in_sub: bool) -> Node:
    if in_sub:
        raise CommandError(ErrorCode.BadValue, "$expr can only be applied to the top-level document")
    # Imported late: expr is a sibling package that may be compiled without us.
    from ginkgodb.query.expr import compile_expr, truthy

    expr = compile_expr(arg)
    variables = dict(ctx.variables) if ctx.variables else None

    def expr_matches(doc: Mapping) -> bool:
        return truthy(expr(doc, variables))

    return DocumentNode(expr_matches)


def parse_sample_rate(ctx: ParseContext, name: str, arg: Any, in_sub: bool) -> Node:
    if in_sub:
        raise CommandError(ErrorCode.BadValue,
                           "$sampleRate can only be applied to the top-level document")
    if not is_bson_number(arg):
        raise CommandError(ErrorCode.BadValue, "argument to $sampleRate must be a numeric type")
    rate = float(arg.to_decimal()) if hasattr(arg, "to_decimal") else float(arg)
    if not 0.0 <= rate <= 1.0:
        raise CommandError(ErrorCode.BadValue, "numeric argument to $sampleRate must be in [0, 1]")
    if rate in (0.0, 1.0):
        return ConstNode(rate == 1.0)
    draw = random.random
    return DocumentNode(lambda doc: draw() < rate)


def parse_where(ctx: ParseContext, name: str, arg: Any, in_sub: bool) -> Node:
    """$where: JavaScript (query/js), where the filter's context allows it (not validators,
    partial indexes or pipelines)."""
    if not ctx.allow_where:
        raise CommandError(ErrorCode.BadValue, "$where is not allowed in this context")
    if in_sub:
        raise CommandError(ErrorCode.BadValue,
                           "$where can only be applied to the top-level document")
    from ginkgodb.query.js import compile_where  # imported late: only $where needs the engine
    return DocumentNode(compile_where(arg))


def parse_text(ctx: ParseContext, name: str, arg: Any, in_sub: bool) -> Node:
    if in_sub:
        raise CommandError(ErrorCode.BadValue, "$text can only be applied to the top-level document")
    # find, count, distinct, updates, deletes and an aggregation's first $match answer $text
    # from the text index (planner/text_plans.py); a filter compiled alone cannot
    raise CommandError(ErrorCode.NotImplemented, "$text is not supported in this context by ginkgodb")
