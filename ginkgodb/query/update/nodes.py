"""The compiled update tree (mongod's UpdateNode family).

An operator update compiles to a tree mirroring its paths: `ObjectNode`s for field names (with an
optional positional `$` child), `ArrayNode`s for `$[]`/`$[<id>]`, and `LeafNode`s holding one
modifier. Children apply in field-name order, which is also the order new fields are created in.
"""
from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

from ginkgodb.errors import CommandError, ErrorCode

from .paths import field_order_key


class _Sentinel:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


MISSING = _Sentinel("MISSING")  # a path that does not exist / nothing was created
NOOP = _Sentinel("NOOP")  # a leaf left its element unchanged
UNSET = _Sentinel("UNSET")  # a leaf removed its element


class ApplyState:
    """Per-document state of one `apply`: what the positional operators resolve to, and flags."""

    __slots__ = ("doc", "position", "inserting", "modified", "filters", "renames", "_now",
                 "owned")

    def __init__(self, doc: dict, position: int | None, inserting: bool,
                 filters: dict[str, Callable[[Any], bool]]) -> None:
        self.doc = doc
        self.position = position
        self.inserting = inserting
        self.modified = False
        self.filters = filters
        self.renames: dict[int, Any] = {}
        self._now: datetime.datetime | None = None
        self.owned: dict[int, Any] = {}

    def now(self) -> datetime.datetime:
        """One clock reading per document, truncated to BSON's millisecond precision."""
        if self._now is None:
            now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
            self._now = now.replace(microsecond=now.microsecond // 1000 * 1000)
        return self._now


class Node:
    __slots__ = ()
    is_leaf = False


class LeafNode(Node):
    """One modifier at one path. Subclasses override `update` and `create`."""

    __slots__ = ()
    is_leaf = True
    op = ""
    allow_creation = True  # creates the path when missing ($set, $inc, $push...)
    allow_nonviable = False  # a missing, uncreatable path is silently ignored ($unset)
    insert_only = False  # $setOnInsert

    def inactive(self, state: ApplyState) -> bool:
        """True when this leaf does nothing for this document ($setOnInsert on an update)."""
        return self.insert_only and not state.inserting

    def immutable_message(self, path: str) -> str:
        return f"Performing an update on the path '{path}' would modify the immutable field '_id'"

    def update(self, value: Any, path: list[str], state: ApplyState) -> Any:
        """New value for an existing element, or NOOP / UNSET."""
        raise NotImplementedError

    def create(self, path: list[str], state: ApplyState) -> Any:
        """Value for a path that does not exist yet (only called when allow_creation)."""
        raise NotImplementedError


class ObjectNode(Node):
    """Children by field name, applied in mongod's order (numbers numerically, then strings)."""

    __slots__ = ("children", "positional", "_sorted", "_merged")

    def __init__(self) -> None:
        self.children: dict[str, Node] = {}
        self.positional: Node | None = None
        self._sorted: list[tuple[str, Node]] | None = None
        self._merged: dict[str, Node] = {}

    def get(self, field: str) -> Node | None:
        return self.positional if field == "$" else self.children.get(field)

    def set(self, field: str, node: Node) -> None:
        self._sorted = None
        if field == "$":
            self.positional = node
        else:
            self.children[field] = node

    def sorted_children(self) -> list[tuple[str, Node]]:
        if self._sorted is None:
            children = self.children
            if any(name[:1].isdigit() for name in children):
                self._sorted = sorted(children.items(), key=lambda kv: field_order_key(kv[0]))
            else:   # no number among the names: field order is string order
                self._sorted = sorted(children.items(), key=_name)
        return self._sorted

    def positional_merged_with(self, field: str, path: list[str]) -> Node:
        """The positional child merged with the child named like the matched index (cached)."""
        merged = self._merged.get(field)
        if merged is None:
            merged = merge_nodes(self.positional, self.children[field], path + [field])
            self._merged[field] = merged
        return merged


def _name(item: tuple[str, Node]) -> str:
    return item[0]


class ArrayNode(Node):
    """Children keyed by array-filter identifier ('' for `$[]`)."""

    __slots__ = ("children", "_sorted", "_merged")

    def __init__(self) -> None:
        self.children: dict[str, Node] = {}
        self._sorted: list[tuple[str, Node]] | None = None
        self._merged: dict[tuple[int, int], Node] = {}

    def get(self, field: str) -> Node | None:
        return self.children.get(field)

    def set(self, field: str, node: Node) -> None:
        self._sorted = None
        self.children[field] = node

    def sorted_children(self) -> list[tuple[str, Node]]:
        if self._sorted is None:
            self._sorted = sorted(self.children.items())
        return self._sorted

    def merged(self, left: Node, right: Node, path: list[str]) -> Node:
        key = (id(left), id(right))
        node = self._merged.get(key)
        if node is None:
            node = merge_nodes(left, right, path)
            self._merged[key] = node
        return node


def merge_nodes(left: Node, right: Node, path: list[str]) -> Node:
    """Combine two subtrees that apply to the same element; two leaves there conflict."""
    if isinstance(left, ObjectNode) and isinstance(right, ObjectNode):
        merged = ObjectNode()
        for field in left.children.keys() | right.children.keys():
            merged.children[field] = _merge_optional(
                left.children.get(field), right.children.get(field), path + [field])
        if left.positional is not None or right.positional is not None:
            merged.positional = _merge_optional(left.positional, right.positional, path + ["$"])
        return merged
    if isinstance(left, ArrayNode) and isinstance(right, ArrayNode):
        merged_array = ArrayNode()
        for ident in left.children.keys() | right.children.keys():
            merged_array.children[ident] = _merge_optional(
                left.children.get(ident), right.children.get(ident), path + [f"$[{ident}]"])
        return merged_array
    raise CommandError(ErrorCode.ConflictingUpdateOperators,
                       f"Update created a conflict at '{'.'.join(path)}'")


def _merge_optional(left: Node | None, right: Node | None, path: list[str]) -> Node:
    if left is None:
        return right  # type: ignore[return-value]
    if right is None:
        return left
    return merge_nodes(left, right, path)
