"""Applying a compiled update tree to one document, copying only the containers that change.

This mirrors mongod's traversal: a path component that does not exist is remembered as part of
a "path to create" while the deepest existing element is kept, so a leaf that creates reports
errors against that element (`Cannot create field 'b' in element {a: 1}`), and once one leaf has
created a path its siblings see it as existing.
"""
from __future__ import annotations

from typing import Any

from bson.dbref import DBRef

from ginkgodb.errors import CommandError, ErrorCode

from .nodes import MISSING, NOOP, UNSET, ApplyState, ArrayNode, LeafNode, Node, ObjectNode
from .paths import array_index, dotted, field_before
from .render import render_element
from .validity import check_top_level_dollar

MAX_PADDING = 1_500_000


def apply_tree(root: ObjectNode, doc: dict, state: ApplyState) -> dict:
    return _apply_object(root, doc, [], state)


def _apply_internal(node: Node, value: Any, path: list[str], state: ApplyState) -> Any:
    if isinstance(node, ObjectNode):
        return _apply_object(node, value, path, state)
    return _apply_array(node, value, path, state)  # type: ignore[arg-type]


def _object_children(node: ObjectNode, path: list[str],
                     state: ApplyState) -> list[tuple[str, Node]]:
    """Children in application order, with the positional child placed at the matched index."""
    children = node.sorted_children()
    if node.positional is None:
        return children
    if state.position is None:
        raise CommandError(ErrorCode.BadValue,
                           "The positional operator did not find the match needed from the query.")
    matched = str(state.position)
    out: list[tuple[str, Node]] = []
    placed = False
    for field, child in children:
        if not placed and field == matched:
            out.append((field, node.positional_merged_with(field, path)))
            placed = True
            continue
        if not placed and field_before(matched, field):
            out.append((matched, node.positional))
            placed = True
        out.append((field, child))
    if not placed:
        out.append((matched, node.positional))
    return out


def _apply_object(node: ObjectNode, container: Any, path: list[str], state: ApplyState) -> Any:
    current = container
    for field, child in _object_children(node, path, state):
        current = apply_child(child, field, current, path, state)
    return current


def _apply_array(node: ArrayNode, value: Any, path: list[str], state: ApplyState) -> Any:
    if not isinstance(value, list):
        raise CommandError(ErrorCode.BadValue, "Cannot apply array updates to non-array element "
                           + render_element(path[-1], value))
    children = node.sorted_children()
    matches = []
    for i, element in enumerate(value):
        hits = [child for ident, child in children
                if ident == "" or state.filters[ident](element)]
        if hits:
            matches.append((i, hits))
    current = value
    for i, hits in matches:
        merged = hits[0]
        for other in hits[1:]:
            merged = node.merged(merged, other, path + [str(i)])
        current = apply_child(merged, str(i), current, path, state)
    return current


def lookup(container: Any, field: str) -> Any:
    """The child `field` of a document or array element, or MISSING."""
    t = type(container)
    if t is dict:
        return container.get(field, MISSING)
    if t is list:
        idx = array_index(field)
        if idx is not None and idx < len(container):
            return container[idx]
    elif t is DBRef:
        return container.as_doc().get(field, MISSING)
    return MISSING


def apply_child(child: Node, field: str, container: Any, path: list[str],
                state: ApplyState) -> Any:
    """Apply `child` to `container[field]`; returns the (possibly new) container."""
    existing = lookup(container, field)
    if existing is MISSING:
        created = create_missing(child, container, path, [field], state)
        if created is MISSING:
            return container
        return _insert(container, field, created, state)
    child_path = path + [field]
    if child.is_leaf:
        result = _apply_leaf(child, existing, child_path, container, state)  # type: ignore[arg-type]
        if result is NOOP:
            return container
    else:
        result = _apply_internal(child, existing, child_path, state)
        if result is existing:
            return container
    return _replace(container, field, result, state)


def _apply_leaf(leaf: LeafNode, existing: Any, path: list[str], parent: Any,
                state: ApplyState) -> Any:
    if leaf.inactive(state):
        return NOOP
    result = leaf.update(existing, path, state)
    if result is NOOP:
        return NOOP
    if path[0] == "_id":
        raise CommandError(ErrorCode.ImmutableField, leaf.immutable_message(dotted(path)))
    if len(path) == 1 and path[0].startswith("$") and not state.inserting and result is not UNSET:
        check_top_level_dollar(path[0], result, parent)
    state.modified = True
    return result


def create_missing(node: Node, parent: Any, parent_path: list[str], to_create: list[str],
                   state: ApplyState) -> Any:
    """Value for the last part of `to_create` (which does not exist under `parent`), or MISSING."""
    if node.is_leaf:
        return _create_leaf(node, parent, parent_path, to_create, state)  # type: ignore[arg-type]
    if isinstance(node, ArrayNode):
        raise CommandError(ErrorCode.BadValue,
                           f"The path '{dotted(parent_path + to_create)}' must exist in the "
                           "document in order to apply array updates.")
    built: Any = MISSING
    here = parent_path + to_create
    for field, child in _object_children(node, here, state):  # type: ignore[arg-type]
        if built is MISSING:
            value = create_missing(child, parent, parent_path, to_create + [field], state)
            if value is not MISSING:
                built = {field: value}
                state.owned[id(built)] = built
        else:
            built = apply_child(child, field, built, here, state)
    return built


def _create_leaf(leaf: LeafNode, parent: Any, parent_path: list[str], to_create: list[str],
                 state: ApplyState) -> Any:
    if leaf.inactive(state):
        return MISSING
    if not leaf.allow_creation:
        if not leaf.allow_nonviable:
            check_viability(parent, parent_path, to_create)
        return MISSING
    check_creatable(parent, parent_path, to_create[0])
    value = leaf.create(parent_path + to_create, state)
    if value is MISSING:
        return MISSING
    if parent_path and parent_path[0] == "_id":
        after = _insert(parent, to_create[0], _nest(to_create[1:], value), state)
        raise CommandError(ErrorCode.ImmutableField,
                           f"Updating the path '{dotted(parent_path)}' to "
                           f"{render_element(parent_path[-1], after)} would modify the "
                           "immutable field '_id'")
    if not parent_path and to_create[0].startswith("$") and not state.inserting:
        check_top_level_dollar(to_create[0], _nest(to_create[1:], value), parent, created=True)
    state.modified = True
    return value


def _nest(parts: list[str], value: Any) -> Any:
    for part in reversed(parts):
        value = {part: value}
    return value


def check_creatable(parent: Any, parent_path: list[str], field: str) -> None:
    """mongod's createPathAt preconditions: objects take any name, arrays only an index."""
    if isinstance(parent, (dict, DBRef)):
        return
    if isinstance(parent, list):
        idx = array_index(field)
        if idx is not None:
            if idx - len(parent) > MAX_PADDING:
                raise CommandError(ErrorCode.CannotBackfillArray,
                                   f"can't backfill more than {MAX_PADDING} elements")
            return
    raise CommandError(ErrorCode.PathNotViable,
                       f"Cannot create field '{field}' in element "
                       f"{{{render_element(parent_path[-1], parent)}}}")


def check_viability(parent: Any, parent_path: list[str], to_create: list[str]) -> None:
    """A missing path is fine for $pop/$pull unless something blocks it (a scalar, an array
    addressed by name)."""
    if isinstance(parent, (dict, DBRef)):
        return
    if isinstance(parent, list) and array_index(to_create[0]) is not None:
        return
    raise CommandError(ErrorCode.PathNotViable,
                       f"Cannot use the part ({to_create[0]}) of ({dotted(parent_path)}."
                       f"{dotted(to_create)}) to traverse the element "
                       f"({{{render_element(parent_path[-1], parent)}}})")


def _writable(container: Any, state: ApplyState) -> Any:
    if id(container) in state.owned:
        return container
    t = type(container)
    copy = dict(container) if t is dict else list(container) if t is list \
        else dict(container.as_doc())
    state.owned[id(copy)] = copy
    return copy


def _insert(container: Any, field: str, value: Any, state: ApplyState) -> Any:
    new = _writable(container, state)
    if type(new) is dict:
        new[field] = value
    else:
        idx = array_index(field)
        assert idx is not None
        new.extend([None] * (idx - len(new)))
        new.append(value)
    return new


def _replace(container: Any, field: str, value: Any, state: ApplyState) -> Any:
    new = _writable(container, state)
    if type(new) is dict:
        if value is UNSET:
            del new[field]
        else:
            new[field] = value
    else:
        new[array_index(field)] = None if value is UNSET else value  # type: ignore[index]
    return new
