"""Apply a parsed projection tree to a document (new dicts; the input is never modified)."""
from __future__ import annotations

from typing import Any

from ginkgodb.errors import CommandError, ErrorCode
from ginkgodb.query.expr import MISSING

from .tree import EXCLUDE, INCLUDE, POSITIONAL, Computed, ElemMatch, Node, Slice


class _Position:
    """The query's positional match; consumed by the first array on the positional path."""

    __slots__ = ("index", "used")

    def __init__(self, index: int | None) -> None:
        self.index, self.used = index, False

    def select(self, arr: list) -> list:
        self.used = True
        if self.index is None:
            raise CommandError(ErrorCode.PositionalProjectionNoMatch,
                               "positional operator '.$' couldn't find a matching element "
                               "in the array")
        if self.index >= len(arr):
            raise CommandError(ErrorCode.PositionalProjectionMismatch,
                               "positional operator '.$' element mismatch")
        return [arr[self.index]]


# ---- inclusion ------------------------------------------------------------------------------


def include(node: Node, doc: dict, pos: _Position | None) -> dict:
    """Fields of `doc` the tree includes, in document order (computed fields come later)."""
    out = {}
    entries = node.entries
    for name, value in doc.items():
        entry = entries.get(name)
        if entry is None or entry is EXCLUDE:
            continue
        if entry is INCLUDE:
            out[name] = value
        elif type(entry) is Node:
            r = _include_value(entry, value, pos)
            if r is not MISSING:
                out[name] = r
        elif type(entry) is Slice:
            out[name] = entry.apply(value)
        elif entry is POSITIONAL:
            out[name] = pos.select(value) if type(value) is list and pos and not pos.used \
                else value
    return out


def _include_value(node: Node, value: Any, pos: _Position | None) -> Any:
    if isinstance(value, dict):
        return include(node, value, pos)
    if type(value) is list:
        if node.has_positional and pos is not None and not pos.used:
            value = pos.select(value)
        out = []
        for elem in value:
            if isinstance(elem, (dict, list)):
                out.append(_include_value(node, elem, pos))
            elif node.has_computed:
                out.append({})
        return out
    return MISSING


def add_computed(node: Node, out: dict, source: dict, root: Any, vars: Any) -> None:
    """Evaluate computed and $elemMatch fields in spec order into `out` (modified)."""
    for name, entry in node.entries.items():
        t = type(entry)
        if t is Computed:
            v = entry.fn(root, vars)
            if v is not MISSING:
                out[name] = v
            else:
                out.pop(name, None)
        elif t is ElemMatch:
            v = entry.first(source.get(name)) if isinstance(source, dict) else None
            if v is not None:
                out[name] = v
        elif t is Node and entry.has_computed:
            sub_source = source.get(name) if isinstance(source, dict) else None
            out[name] = _computed_value(entry, out.get(name, MISSING), sub_source, root, vars)


def _computed_value(node: Node, current: Any, source: Any, root: Any, vars: Any) -> Any:
    if isinstance(current, dict):
        current = dict(current)
        add_computed(node, current, source, root, vars)
        return current
    if type(current) is list:
        return [_computed_value(node, e, None, root, vars) for e in current]
    fresh: dict = {}
    add_computed(node, fresh, None, root, vars)
    return fresh


# ---- exclusion ------------------------------------------------------------------------------


def exclude(node: Node, doc: dict) -> dict:
    out = {}
    entries = node.entries
    for name, value in doc.items():
        entry = entries.get(name)
        if entry is None or entry is INCLUDE:
            out[name] = value
        elif entry is EXCLUDE:
            continue
        elif type(entry) is Node:
            out[name] = _exclude_value(entry, value)
        elif type(entry) is Slice:
            out[name] = entry.apply(value)
        elif type(entry) is ElemMatch:
            v = entry.first(value)
            if v is not None:
                out[name] = v
        else:
            out[name] = value
    return out


def _exclude_value(node: Node, value: Any) -> Any:
    if isinstance(value, dict):
        return exclude(node, value)
    if type(value) is list:
        return [_exclude_value(node, e) for e in value]
    return value


def new_position(index: int | None, needed: bool) -> _Position | None:
    return _Position(index) if needed else None
