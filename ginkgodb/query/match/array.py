"""$size, $all and $elemMatch: operators that look at arrays as a whole."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bson.regex import Regex

from ginkgodb.errors import CommandError, ErrorCode

from .comparison import equality_predicate
from .context import FIELD_OPERATOR_NAMES, ParseContext, is_expression_document
from .nodes import AndNode, ConstNode, Node, all_of, leaf
from .numbers import parse_non_negative_int
from .regex import regex_operand, regex_predicate
from .values import as_document, is_object

PATHLESS_OPERATORS = frozenset({
    "alwaysFalse", "alwaysTrue", "and", "comment", "db", "expr", "id", "jsonSchema", "nor", "or",
    "ref", "sampleRate", "text", "where",
})


def parse_size(ctx: ParseContext, path: str | None, arg: Any, spec: Mapping,
               in_sub: bool) -> Node:
    try:
        size = parse_non_negative_int("$size", arg)
    except CommandError as exc:
        raise CommandError(ErrorCode.BadValue, f"Failed to parse $size. {exc.errmsg}") from None

    def has_size(v: Any) -> bool:
        return type(v) is list and len(v) == size

    return leaf(path, has_size, keep_leaf_array=True)


def parse_elem_match(ctx: ParseContext, path: str | None, arg: Any, spec: Mapping | None = None,
                     in_sub: bool = False) -> Node:
    if type(arg) is not dict:
        raise CommandError(ErrorCode.BadValue, "$elemMatch needs an Object")
    value_form = (is_expression_document(arg, allow_incomplete_dbref=True)
                  and next(iter(arg))[1:] not in PATHLESS_OPERATORS)
    if value_form:
        children = ctx.operators(None, arg, True)
        element_test = all_of([c.elem for c in children])  # on values, as on documents
    else:
        sub = ctx.document(arg, True).match

        def element_test(x: Any) -> bool:
            t = type(x)
            if t is dict:
                return sub(x)
            if t is list or is_object(x):
                return sub(as_document(x))
            return False

    def first_match(v: Any) -> int | None:
        if type(v) is list:
            for i, x in enumerate(v):
                if element_test(x):
                    return i
        return None

    def elem_match(v: Any) -> bool:
        if type(v) is list:
            for x in v:
                if element_test(x):
                    return True
        return False

    return leaf(path, elem_match, keep_leaf_array=True, element_index=first_match)


def parse_all(ctx: ParseContext, path: str | None, arg: Any, spec: Mapping,
              in_sub: bool) -> Node:
    if type(arg) is not list:
        raise CommandError(ErrorCode.BadValue, "$all needs an array")
    if arg and _starts_with_elem_match(arg[0]):
        children = []
        for item in arg:
            if not _starts_with_elem_match(item):
                raise CommandError(ErrorCode.BadValue, "$all/$elemMatch has to be consistent")
            children.append(parse_elem_match(ctx, path, item["$elemMatch"]))
        return AndNode(children)
    children = []
    for item in arg:
        if type(item) is Regex:
            children.append(leaf(path, regex_predicate(*regex_operand(item))))
        elif type(item) is dict and item and next(iter(item)) in FIELD_OPERATOR_NAMES:
            raise CommandError(ErrorCode.BadValue, "no $ expressions in $all")
        else:
            children.append(leaf(path, equality_predicate(item)))
    if not children:
        return ConstNode(False)
    return AndNode(children)


def _starts_with_elem_match(item: Any) -> bool:
    return type(item) is dict and bool(item) and next(iter(item)) == "$elemMatch"
