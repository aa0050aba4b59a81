"""$rename: a $set of the destination from the source's value plus an $unset of the source.

The tree holds a placeholder leaf at the source (so other updates of that path conflict) and a
target leaf at the destination. Neither path can be touched by any other update, so the source
is located and both paths are checked once, against the document as it was, before the tree runs.
"""
from __future__ import annotations

from typing import Any

from ginkgodb.bsonutil.compare import compare
from ginkgodb.errors import CommandError, ErrorCode

from .nodes import MISSING, NOOP, UNSET, ApplyState, LeafNode
from .paths import array_index, is_array_filter, is_positional
from .render import id_element, render_element
from .values import copy_value


def check_rename(source: str, target: str) -> None:
    """mongod's RenameNode::init checks."""
    spec = render_element(source, target)
    if "\0" in target:
        raise CommandError(ErrorCode.BadValue,
                           "The 'to' field for $rename cannot contain an embedded null byte")
    if source == target:
        raise CommandError(ErrorCode.BadValue,
                           f"The source and target field for $rename must differ: {spec}")
    src, dst = source.split("."), target.split(".")
    shorter = min(len(src), len(dst))
    if src[:shorter] == dst[:shorter]:
        raise CommandError(ErrorCode.BadValue, "The source and target field for $rename must "
                           f"not be on the same path: {spec}")
    if any(is_positional(p) or is_array_filter(p) for p in src):
        raise CommandError(ErrorCode.BadValue,
                           f"The source field for $rename may not be dynamic: {source}")
    if any(is_positional(p) or is_array_filter(p) for p in dst):
        raise CommandError(ErrorCode.BadValue,
                           f"The destination field for $rename may not be dynamic: {target}")


class RenameSourceNode(LeafNode):
    """Removes the source once the rename is known to happen."""

    __slots__ = ("source", "target")
    op = "$rename"
    allow_creation = False
    allow_nonviable = True

    def __init__(self, source: str) -> None:
        self.source = source.split(".")
        self.target: list[str] = []

    def inactive(self, state: ApplyState) -> bool:
        return state.renames.get(id(self), MISSING) is MISSING

    def update(self, value: Any, path: list[str], state: ApplyState) -> Any:
        return UNSET

    def immutable_message(self, path: str) -> str:
        return (f"Unsetting the path '{path}' using $rename would modify the immutable field "
                "'_id'")

    def prepare(self, doc: dict, state: ApplyState) -> None:
        """Find the source value and refuse renames through arrays (before any change)."""
        found = _find_source(doc, self.source)
        if found is MISSING:
            return
        value, chain = found
        _refuse_arrays(chain, "source", ".".join(self.source), doc)
        target_chain = _target_chain(doc, self.target)
        _refuse_arrays(target_chain, "destination", ".".join(self.target), doc)
        state.renames[id(self)] = value


class RenameTargetNode(LeafNode):
    """Sets the destination to the source's value (unchanged if it compares equal)."""

    __slots__ = ("source_node",)
    op = "$rename"

    def __init__(self, source_node: RenameSourceNode, target: str) -> None:
        self.source_node = source_node
        source_node.target = target.split(".")

    def inactive(self, state: ApplyState) -> bool:
        return state.renames.get(id(self.source_node), MISSING) is MISSING

    def update(self, value: Any, path: list[str], state: ApplyState) -> Any:
        source = state.renames[id(self.source_node)]
        return NOOP if compare(value, source) == 0 else copy_value(source)

    def create(self, path: list[str], state: ApplyState) -> Any:
        return copy_value(state.renames[id(self.source_node)])


def _find_source(doc: dict, parts: list[str]) -> Any:
    """(value, ancestors) of the source, MISSING when absent; error 28 when not traversable."""
    current: Any = doc
    name = ""
    chain: list[tuple[str, Any]] = []
    for part in parts:
        if current is not doc:
            chain.append((name, current))
        if isinstance(current, dict):
            if part not in current:
                return MISSING
            nxt = current[part]
        else:
            idx = array_index(part) if isinstance(current, list) else None
            if idx is None:
                raise CommandError(ErrorCode.PathNotViable,
                                   f"cannot use the part ({name} of {'.'.join(parts)}) to "
                                   f"traverse the element ({{{render_element(name, current)}}})")
            if idx >= len(current):
                return MISSING
            nxt = current[idx]
        current, name = nxt, part
    return current, chain


def _target_chain(doc: dict, parts: list[str]) -> list[tuple[str, Any]]:
    """Existing ancestors of the destination (the deepest existing element when it is absent)."""
    current: Any = doc
    chain: list[tuple[str, Any]] = []
    for part in parts:
        if isinstance(current, dict) and part in current:
            nxt = current[part]
        elif isinstance(current, list) and array_index(part) is not None \
                and array_index(part) < len(current):  # type: ignore[operator]
            nxt = current[array_index(part)]  # type: ignore[index]
        else:
            return chain
        chain.append((part, nxt))
        current = nxt
    return chain[:-1]


def _refuse_arrays(chain: list[tuple[str, Any]], side: str, path: str, doc: dict) -> None:
    for name, value in reversed(chain):
        if isinstance(value, list):
            raise CommandError(ErrorCode.BadValue,
                               f"The {side} field cannot be an array element, '{path}' in doc "
                               f"with {id_element(doc)} has an array field called '{name}'")
