"""Parse a projection document into a tree, enforcing mongod's rules and error codes."""
from __future__ import annotations

from typing import Any

from bson.decimal128 import Decimal128

from ginkgodb.bsonutil.paths import refused_dollar_name
from ginkgodb.bsonutil.types import is_bson_number
from ginkgodb.errors import CommandError, ErrorCode
from ginkgodb.query.expr.compiler import Scope, compile_node

from .tree import EXCLUDE, INCLUDE, POSITIONAL, Computed, ElemMatch, Node, Slice

_OPERATOR_MSG = "Cannot use expression other than $meta in exclusion projection"


class Parser:
    """One parse of one projection. `find` enables $elemMatch, `$` and find's $slice."""

    def __init__(self, find: bool, scope: Scope, query: Any = None) -> None:
        self.find, self.scope, self.query = find, scope, query
        self.root = Node()
        self.kind: str | None = None
        self.id_choice: bool | None = None
        self.positional_path: str | None = None
        self.elem_match_paths: list[str] = []

    # ---- entry points --------------------------------------------------------------------

    def parse(self, spec: dict) -> None:
        self.document(spec, [])
        if self.kind is None:
            self.kind = "inclusion" if self.id_choice or self.elem_match_paths else "exclusion"

    def document(self, spec: dict, prefix: list[str]) -> None:
        for name, value in spec.items():
            if name == ".$" and self.find and _is_flag(value) and _truthy(value):
                raise CommandError(ErrorCode.PositionalProjectionEmptyPath,
                                   f"Projection on field {name} is invalid")
            parts = self.split(name, prefix)
            self.field(parts, value, name)

    def split(self, name: str, prefix: list[str]) -> list[str]:
        if not name:
            raise CommandError(ErrorCode.FieldPathEmpty,
                               "FieldPath cannot be constructed with empty string")
        if name.endswith("."):
            raise CommandError(ErrorCode.FieldPathTrailingDot, "FieldPath must not end with a '.'.")
        parts = name.split(".")
        for i, part in enumerate(parts):
            if not part:
                raise CommandError(ErrorCode.FieldPathEmptyName,
                                   "FieldPath field names may not be empty strings.")
            if refused_dollar_name(part) and not (part == "$" and i > 0):
                raise CommandError(ErrorCode.FieldPathDollarPrefixed,
                                   "FieldPath field names may not start with '$'. "
                                   "Consider using $getField or $setField.")
        return prefix + parts

    # ---- one field -----------------------------------------------------------------------

    def field(self, parts: list[str], value: Any, name: str = "") -> None:
        if parts[-1] == "$" and "$" not in parts[:-1]:
            return self.positional(parts[:-1], value, name or ".".join(parts))
        if "$" in parts:
            raise CommandError(ErrorCode.PositionalProjectionMidPath,
                               "As of 4.4, it's illegal to specify positional operator in "
                               "the middle of a path.Positional projection may only be "
                               "used at the end, for example: a.b.$. If the query "
                               "previously used a form like a.b.$.d, remove the parts "
                               "following the '$' and the results will be equivalent.")
        if isinstance(value, bool) or is_bson_number(value):
            return self.flag(parts, _truthy(value))
        if isinstance(value, dict):
            if not value:
                raise CommandError(ErrorCode.ProjectionEmptySubObject,
                                   "An empty sub-projection is not a valid value. Found "
                                   f"empty object at path {'.'.join(parts)}")
            first = next(iter(value))
            if first.startswith("$") and len(value) == 1:
                return self.operator(parts, value, first)
            return self.document(value, parts)
        self.computed(parts, compile_node(value, self.scope), literal=True)

    def flag(self, parts: list[str], include: bool) -> None:
        path = ".".join(parts)
        if path == "_id":
            self.id_choice = include
            self.root.insert(parts, INCLUDE if include else EXCLUDE)
            return
        if include:
            if self.kind == "exclusion":
                raise CommandError(ErrorCode.ProjectionInclusionInExclusion,
                                   f"Cannot do inclusion on field {path} in exclusion "
                                   "projection")
            self.kind = "inclusion"
            self.root.insert(parts, INCLUDE)
        else:
            if self.kind == "inclusion":
                raise CommandError(ErrorCode.ProjectionExclusionInInclusion,
                                   f"Cannot do exclusion on field {path} in inclusion "
                                   "projection")
            self.kind = "exclusion"
            self.root.insert(parts, EXCLUDE)

    def computed(self, parts: list[str], fn: Any, literal: bool) -> None:
        if self.kind == "exclusion":
            raise CommandError(ErrorCode.ProjectionLiteralOperator if literal
                               else ErrorCode.ProjectionOperatorInInclusion, _OPERATOR_MSG)
        self.kind = "inclusion"
        self.root.insert(parts, Computed(fn))

    def operator(self, parts: list[str], value: dict, name: str) -> None:
        if len(value) != 1:
            raise CommandError(ErrorCode.ExpressionObjectNotSingleField,
                               "An object representing an expression must have exactly one"
                               f" field: {_show(value)}")
        arg = value[name]
        if name == "$meta":
            self.root.insert(parts, Computed(compile_node(value, self.scope)))
            return
        if self.find and name == "$slice" and _slice_form(arg):
            self.root.insert(parts, _parse_slice(arg))
            return
        if self.find and name == "$elemMatch":
            return self.elem_match(parts, arg)
        from ginkgodb.query.expr.compiler import OPERATORS
        if name not in OPERATORS and name not in ("$elemMatch", "$slice"):
            raise CommandError(ErrorCode.ProjectionUnknownExpression, f"Unknown expression {name}")
        self.computed(parts, compile_node(value, self.scope), literal=False)

    def elem_match(self, parts: list[str], arg: Any) -> None:
        if not isinstance(arg, dict):
            from ginkgodb.query.expr.values import type_name
            raise CommandError(ErrorCode.ElemMatchProjectionNotObject,
                               "elemMatch: Invalid argument, object required, but got "
                               f"{type_name(arg)}")
        if len(parts) > 1:
            raise CommandError(ErrorCode.ElemMatchProjectionNested,
                               "Cannot use $elemMatch projection on a nested field.")
        if self.positional_path is not None:
            raise CommandError(ErrorCode.ProjectionPositionalWithElemMatch,
                               "Cannot specify positional operator and $elemMatch.")
        from ginkgodb.query.match import compile_filter
        matcher = compile_filter({"e": {"$elemMatch": arg}})
        self.elem_match_paths.append(parts[0])
        self.root.insert(parts, ElemMatch(matcher))

    def positional(self, parts: list[str], value: Any, name: str) -> None:
        path = ".".join(parts)
        if not self.find:
            raise CommandError(ErrorCode.PositionalProjectionInAggregation,
                               "Cannot use positional projection in aggregation "
                               "projection")
        if isinstance(value, dict):
            raise CommandError(ErrorCode.PositionalProjectionWithExpression,
                               "positional projection cannot be used with an expression or sub "
                               "object")
        if not _is_flag(value):
            raise CommandError(ErrorCode.PositionalProjectionWithLiteral,
                               "positional projection cannot be used with a literal")
        if not _truthy(value):
            raise CommandError(ErrorCode.PositionalProjectionWithExclusion,
                               "positional projection cannot be used with exclusion")
        if self.positional_path is not None:
            raise CommandError(ErrorCode.ProjectionMultiplePositional,
                               "Cannot specify more than one positional projection per "
                               "query.")
        if self.elem_match_paths:
            raise CommandError(ErrorCode.ProjectionElemMatchWithPositional,
                               "Cannot specify positional operator and $elemMatch.")
        if self.query is not None:
            check_positional_query(self.query)
        if self.kind == "exclusion":
            raise CommandError(ErrorCode.ProjectionInclusionInExclusion,
                               f"Cannot do inclusion on field {name} in exclusion "
                               "projection")
        self.kind = "inclusion"
        self.positional_path = path
        self.root.insert(parts, POSITIONAL)


# The filter features a positional projection's matcher may not use (mongod parses the filter
# again with kBanAllSpecialFeatures): operator -> (code, message).
_BANNED_WITH_POSITIONAL = {
    "$where": (ErrorCode.BadValue, "$where is not allowed in this context"),
    "$text": (ErrorCode.BadValue, "$text is not allowed in this context"),
    "$expr": (ErrorCode.QueryFeatureNotAllowed, "$expr is not allowed in this context"),
    "$jsonSchema": (ErrorCode.QueryFeatureNotAllowed, "$jsonSchema is not allowed in this context"),
}
_GEO_NEAR = ("$near", "$nearSphere", "$geoNear")


def check_positional_query(query: Any) -> None:
    """Refuse the filter features mongod bans beside a positional projection."""
    if not isinstance(query, dict):
        return
    for key, value in query.items():
        banned = _BANNED_WITH_POSITIONAL.get(key)
        if banned is not None:
            raise CommandError(*banned)
        if key in ("$and", "$or", "$nor") and isinstance(value, list):
            for clause in value:
                check_positional_query(clause)
        elif not key.startswith("$") and isinstance(value, dict):
            for op, arg in value.items():
                if op in _GEO_NEAR:
                    raise CommandError(ErrorCode.BadValue, "$geoNear, $near, and $nearSphere "
                                                           "are not allowed in this context")
                if op == "$elemMatch" and isinstance(arg, dict):
                    check_positional_query(arg)
                elif op == "$not" and isinstance(arg, dict):
                    check_positional_query({key: arg})


def _is_flag(v: Any) -> bool:
    return isinstance(v, bool) or is_bson_number(v)


def _truthy(v: Any) -> bool:
    if type(v) is Decimal128:
        return not v.to_decimal().is_zero()
    return bool(v)


def _slice_form(arg: Any) -> bool:
    """find's $slice takes a number or [skip, limit]; anything else is the expression."""
    if is_bson_number(arg):
        return True
    return isinstance(arg, list) and len(arg) == 2 and all(is_bson_number(a) for a in arg)


def _parse_slice(arg: Any) -> Slice:
    if is_bson_number(arg):
        return Slice(None, _as_int(arg))
    skip, limit = _as_int(arg[0]), _as_int(arg[1])
    if limit <= 0:
        raise CommandError(ErrorCode.SliceFirstArgNotArray, "$slice limit must be positive")
    return Slice(skip, limit)


def _as_int(v: Any) -> int:
    if type(v) is Decimal128:
        v = v.to_decimal()
    try:
        return int(v)
    except OverflowError:
        return 2**62 if v > 0 else -2**62
    except ValueError:
        return 0


def _show(v: Any) -> str:
    from ginkgodb.query.expr.values import bson_repr
    return bson_repr(v)
