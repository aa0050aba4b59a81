"""Compiling an operator update (`{$set: {...}, $inc: {...}}`) into an update tree.

Each `<path>: <argument>` becomes a leaf under the nodes for its path components. Two updates of
the same path, or of a path and its prefix, conflict (error 40), as in mongod's parseAndMerge.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ginkgodb.bsonutil.types import type_name
from ginkgodb.errors import CommandError, ErrorCode

from .nodes import ArrayNode, LeafNode, ObjectNode
from .paths import array_filter_id, check_updatable, is_array_filter, is_positional
from .render import render_document, render_element

LeafFactory = Callable[[str, Any], LeafNode]


class ParseContext:
    """What leaf constructors need beyond their own argument."""

    def __init__(self, factories: dict[str, LeafFactory], array_filters: Mapping[str, Any]) -> None:
        self.factories = factories
        self.array_filters = array_filters
        self.used_filters: set[str] = set()
        self.positional = False
        self.renames: list[Any] = []


def parse_operators(spec: Mapping, ctx: ParseContext) -> ObjectNode:
    root = ObjectNode()
    for op, operand in spec.items():
        if op not in ctx.factories:
            raise CommandError(ErrorCode.FailedToParse,
                               f"Unknown modifier: {op}. Expected a valid update modifier or "
                               "pipeline-style update specified as an array")
        if not isinstance(operand, Mapping):
            raise CommandError(ErrorCode.FailedToParse,
                               f"Modifiers operate on fields but we found type "
                               f"{type_name(operand)} instead. For example: "
                               f"{{$mod: {{<field>: ...}}}} not {{{render_element(op, operand)}}}")
        for field, argument in operand.items():
            if op == "$rename":
                _parse_rename(root, field, argument, ctx)
            else:
                merge_leaf(root, field, ctx.factories[op](field, argument), ctx)
    for ident in ctx.array_filters:
        if ident not in ctx.used_filters:
            raise CommandError(ErrorCode.FailedToParse,
                               f"The array filter for identifier '{ident}' was not used in the "
                               f"update {render_document(spec)}")
    return root


def _parse_rename(root: ObjectNode, field: str, target: Any, ctx: ParseContext) -> None:
    from .rename import RenameSourceNode, RenameTargetNode, check_rename

    source_leaf = RenameSourceNode(field)
    merge_leaf(root, field, source_leaf, ctx)
    if not isinstance(target, str):
        raise CommandError(ErrorCode.BadValue,
                           f"The 'to' field for $rename must be a string: "
                           f"{render_element(field, target)}")
    _check_positional(check_updatable(target), target)
    check_rename(field, target)
    merge_leaf(root, target, RenameTargetNode(source_leaf, target), ctx)
    ctx.renames.append(source_leaf)


def merge_leaf(root: ObjectNode, path: str, leaf: LeafNode, ctx: ParseContext) -> None:
    if path and "." not in path and path[0] != "$":
        # one plain part (no positional, no array filter): what the general walk below does
        if root.get(path) is not None:
            raise _conflict(path, path)
        root.set(path, leaf)
        return
    parts = check_updatable(path)
    _check_positional(parts, path)
    current: ObjectNode | ArrayNode = root
    for i, part in enumerate(parts[:-1]):
        name = _child_name(part, i, path, ctx)
        wants_array = is_array_filter(parts[i + 1])
        child = current.get(name)
        if child is None:
            child = ArrayNode() if wants_array else ObjectNode()
            current.set(name, child)
        elif child.is_leaf or isinstance(child, ArrayNode) != wants_array:
            raise _conflict(path, ".".join(parts[: i + 1]))
        current = child  # type: ignore[assignment]
    name = _child_name(parts[-1], len(parts) - 1, path, ctx)
    if current.get(name) is not None:
        raise _conflict(path, path)
    current.set(name, leaf)


def _conflict(path: str, at: str) -> CommandError:
    return CommandError(ErrorCode.ConflictingUpdateOperators,
                        f"Updating the path '{path}' would create a conflict at '{at}'")


def _check_positional(parts: list[str], path: str) -> None:
    count = sum(1 for p in parts if is_positional(p))
    if count > 1:
        raise CommandError(ErrorCode.BadValue,
                           f"Too many positional (i.e. '$') elements found in path '{path}'")
    if count and is_positional(parts[0]):
        raise CommandError(ErrorCode.BadValue, "Cannot have positional (i.e. '$') element in the "
                           f"first position in path '{path}'")


def _child_name(part: str, index: int, path: str, ctx: ParseContext) -> str:
    if is_positional(part):
        ctx.positional = True
        return part
    if not is_array_filter(part):
        return part
    if index == 0:
        raise CommandError(ErrorCode.BadValue, "Cannot have array filter identifier (i.e. "
                           f"'$[<id>]') element in the first position in path '{path}'")
    ident = array_filter_id(part)
    if ident and ident not in ctx.array_filters:
        raise CommandError(ErrorCode.BadValue,
                           f"No array filter found for identifier '{ident}' in path '{path}'")
    if ident:
        ctx.used_filters.add(ident)
    return ident


def has_dynamic_part(path: str) -> bool:
    return any(is_positional(p) or is_array_filter(p) for p in path.split("."))


