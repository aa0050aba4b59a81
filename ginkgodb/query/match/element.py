"""$exists and $type."""
from __future__ import annotations

from typing import Any

from bson.code import Code

from ginkgodb.bsonutil.types import TYPE_ALIASES, bson_type
from ginkgodb.errors import CommandError, ErrorCode

from .context import ParseContext
from .describe import number_g
from .nodes import Node, NotNode, leaf
from .numbers import is_bson_number, parse_int
from .values import MISSING

VALID_TYPE_CODES = frozenset({-1, 127} | set(range(1, 20)))
NUMBER_TYPE_CODES = frozenset({1, 16, 18, 19})


def bson_truthy(v: Any) -> bool:
    """BSONElement::trueValue: false, null, 0 (and missing) are false; NaN and the rest true."""
    if v is None or v is MISSING or v is False:
        return False
    if v is True:
        return True
    if is_bson_number(v):
        return not (v.to_decimal().is_zero() if hasattr(v, "to_decimal") else v == 0)
    return True


def _exists(v: Any) -> bool:
    return v is not MISSING


def parse_exists(ctx: ParseContext, path: str | None, arg: Any, spec: Any, in_sub: bool) -> Node:
    node = leaf(path, _exists)
    return node if bson_truthy(arg) else NotNode(node)


def parse_type(ctx: ParseContext, path: str | None, arg: Any, spec: Any, in_sub: bool) -> Node:
    codes = type_codes(arg)
    if not codes:
        raise CommandError(ErrorCode.FailedToParse, f"{path or ''} must match at least one type")

    def has_type(v: Any) -> bool:
        return v is not MISSING and type_code(v) in codes

    return leaf(path, has_type)


def type_code(v: Any) -> int:
    """bson_type, except that Code (a str subclass) is JavaScript, not a string."""
    if isinstance(v, Code):
        return 15 if v.scope is not None else 13
    return bson_type(v)


def type_codes(arg: Any) -> frozenset[int]:
    """MatcherTypeSet::parse: a code or alias, or an array of them; "number" is every number."""
    items = arg if type(arg) is list else [arg]
    codes: set[int] = set()
    for item in items:
        codes |= _single_type(item)
    return frozenset(codes)


def _single_type(item: Any) -> frozenset[int]:
    if type(item) is str:
        if item == "number":
            return NUMBER_TYPE_CODES
        if item not in TYPE_ALIASES:
            if item == "missing":
                raise CommandError(ErrorCode.BadValue, "'missing' is not a legal type name. To "
                                   "query for non-existence of a field, use {$exists:false}.")
            raise CommandError(ErrorCode.BadValue, f"Unknown type name alias: {item}")
        return frozenset({TYPE_ALIASES[item]})
    if not is_bson_number(item):
        raise CommandError(ErrorCode.TypeMismatch,
                           "type must be represented as a number or a string")
    try:
        code = parse_int("", item)
    except CommandError:
        raise CommandError(ErrorCode.BadValue,
                           f"Invalid numerical type code: {number_g(item)}") from None
    if code == 0:
        raise CommandError(ErrorCode.BadValue, f"Invalid numerical type code: {number_g(item)}. "
                                               "Instead use {$exists:false}.")
    if code not in VALID_TYPE_CODES:
        raise CommandError(ErrorCode.BadValue, f"Invalid numerical type code: {number_g(item)}")
    return frozenset({code})
