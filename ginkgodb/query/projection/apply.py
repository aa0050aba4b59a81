"""Apply a parsed projection tree to a document (new dicts; the input is never modified)."""
from __future__ import annotations

from typing import Any

from bson.dbref import DBRef

from ginkgodb.errors import CommandError, ErrorCode
from ginkgodb.query.expr import MISSING

from .tree import EXCLUDE, INCLUDE, POSITIONAL, Computed, ElemMatch, Node, Slice


def apply_positional(out: dict, parts: list[str], index: int | None) -> None:
    """mongod's find positional projection, on the already projected document `out` (modified):
    the first array met along `parts` is replaced by its element at the query's positional match
    `index`; a path that is missing, or holds no array, is left as the inclusion made it."""
    node: Any = out
    last = len(parts) - 1
    for i, name in enumerate(parts):
        value = node.get(name, MISSING)
        if type(value) is list:
            if index is None:
                raise CommandError(ErrorCode.PositionalProjectionNoMatch,
                                   "positional operator '.$' couldn't find a matching element "
                                   "in the array")
            if index >= len(value):
                raise CommandError(ErrorCode.PositionalProjectionMismatch,
                                   "positional operator '.$' element mismatch")
            node[name] = [value[index]]
            return
        if not isinstance(value, dict) or i == last:
            return
        value = dict(value)  # the projected document may share sub-documents with the input
        node[name] = value
        node = value


# ---- inclusion ------------------------------------------------------------------------------


def include(node: Node, doc: dict) -> dict:
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
            r = _include_value(entry, value)
            if r is not MISSING:
                out[name] = r
        elif type(entry) is Slice:
            out[name] = entry.apply(value)
        elif entry is POSITIONAL:
            out[name] = value  # narrowed afterwards by apply_positional
    return out


def _include_value(node: Node, value: Any) -> Any:
    if type(value) is DBRef:  # a DBRef is the document {$ref, $id, $db, ...}
        value = value.as_doc()
    if isinstance(value, dict):
        return include(node, value)
    if type(value) is list:
        out = []
        for elem in value:
            if isinstance(elem, (dict, list, DBRef)):
                out.append(_include_value(node, elem))
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
    if type(value) is DBRef:
        value = value.as_doc()
    if isinstance(value, dict):
        return exclude(node, value)
    if type(value) is list:
        return [_exclude_value(node, e) for e in value]
    return value
