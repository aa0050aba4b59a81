"""$and, $or, $nor (lists of filter documents) and $not (negates a field's operators)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bson.regex import Regex

from ginkgodb.errors import CommandError, ErrorCode

from .context import ParseContext
from .nodes import AndNode, Node, NotNode, OrNode, conjunction, disjunction, leaf
from .regex import regex_operand, regex_predicate


def parse_tree(ctx: ParseContext, name: str, arg: Any, in_sub: bool) -> Node:
    """$and/$or/$nor: a non-empty array of filter documents."""
    if type(arg) is not list:
        raise CommandError(ErrorCode.BadValue, f"{name} must be an array")
    if not arg:
        raise CommandError(ErrorCode.BadValue, "$and/$or/$nor must be a nonempty array")
    children = []
    for item in arg:
        if type(item) is not dict:
            raise CommandError(ErrorCode.BadValue, "$or/$and/$nor entries need to be full objects")
        children.append(ctx.document(item, in_sub))
    if name == "$and":
        return conjunction(children)
    if name == "$or":
        same_path = _equalities_on_one_path(arg)
        if same_path is not None:  # mongod rewrites it to $in, which records the positional match
            return ctx.document({same_path[0]: {"$in": same_path[1]}}, in_sub)
        return disjunction(children)
    return NotNode(OrNode(children) if len(children) > 1 else children[0])


def _equalities_on_one_path(clauses: list) -> tuple[str, list] | None:
    """(path, values) when every $or clause is an equality (or regex) on the same one path."""
    if len(clauses) < 2:
        return None
    path, values = None, []
    for clause in clauses:
        if len(clause) != 1:
            return None
        key, value = next(iter(clause.items()))
        if key.startswith("$") or (path is not None and key != path):
            return None
        if type(value) is dict and value and next(iter(value)).startswith("$"):
            if list(value) != ["$eq"] or type(value["$eq"]) is Regex:
                return None
            value = value["$eq"]
        path = key
        values.append(value)
    return path, values


def parse_not(ctx: ParseContext, path: str | None, arg: Any, spec: Mapping,
              in_sub: bool) -> Node:
    """{path: {$not: /re/ or {operators}}}: true where the operators (as a whole) are false."""
    if type(arg) is Regex:
        return NotNode(leaf(path, regex_predicate(*regex_operand(arg))))
    if type(arg) is not dict:
        raise CommandError(ErrorCode.BadValue, "$not needs a regex or a document")
    if not arg:
        raise CommandError(ErrorCode.BadValue, "$not cannot be empty")
    children = ctx.operators(path, arg, in_sub)
    return NotNode(children[0] if len(children) == 1 else AndNode(children))
