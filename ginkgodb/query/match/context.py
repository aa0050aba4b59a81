"""What operator parsers need from the compiler, passed explicitly to avoid import cycles."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .nodes import Node


@dataclass(frozen=True)
class ParseContext:
    """One filter compilation: recursion entry points and the $expr variables.

    `in_subdocument` is mongod's kUserSubDocument level: true under $elemMatch, where operators
    that need the whole document ($expr, $text, $where) are rejected.
    """

    document: Callable[[Mapping, bool], Node]  # (spec, in_subdocument) -> node
    operators: Callable[[str | None, Mapping, bool], list[Node]]  # (path, spec, in_sub) -> nodes
    variables: Mapping[str, Any] | None = None
    allow_where: bool = True  # False where mongod says "$where is not allowed in this context"


def is_expression_document(value: Any, allow_incomplete_dbref: bool) -> bool:
    """mongod's isExpressionDocument: `{$op: ...}` rather than a literal document or DBRef."""
    if type(value) is not dict or not value:
        return False
    first = next(iter(value))
    if not first.startswith("$"):
        return False
    has_ref, has_id, has_db = "$ref" in value, "$id" in value, "$db" in value
    if allow_incomplete_dbref:
        return not (has_ref or has_id or has_db)
    return not (has_ref and has_id)


# Every operator mongod accepts inside `{path: {...}}` (parsePathAcceptingKeyword), including
# the ones ginkgodb refuses; `$all` needs the list to reject `{$all: [{$gt: 1}]}`.
FIELD_OPERATOR_NAMES = frozenset({
    "$all", "$bitsAllClear", "$bitsAllSet", "$bitsAnyClear", "$bitsAnySet", "$elemMatch", "$eq",
    "$exists", "$geoIntersects", "$geoNear", "$geoWithin", "$gt", "$gte", "$in", "$lt", "$lte",
    "$mod", "$ne", "$near", "$nearSphere", "$nin", "$options", "$regex", "$size", "$type",
    "$within",
})
