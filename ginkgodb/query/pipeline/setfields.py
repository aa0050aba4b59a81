"""$addFields/$set specs: every leaf is an expression; nested documents merge into existing ones."""
from __future__ import annotations

from typing import Any

from ginkgodb.errors import CommandError, ErrorCode
from ginkgodb.query.expr.compiler import Scope, compile_node
from ginkgodb.query.expr.values import bson_repr, type_name
from ginkgodb.query.projection.tree import Computed, Node

from .fields import validate_path


def compile_set_fields(spec: Any, scope: Scope, name: str) -> Node:
    """A tree whose leaves are Computed; apply with projection.apply.add_computed."""
    if not isinstance(spec, dict):
        raise CommandError(ErrorCode.AddFieldsSpecNotObject,
                           f"{name} specification stage must be an object, got "
                           f"{type_name(spec)}")
    root = Node()
    _document(root, spec, [], scope, name, top=True)
    return root


def _document(root: Node, spec: dict, prefix: list[str], scope: Scope, name: str,
              top: bool) -> None:
    for key, value in spec.items():
        if not top and "." in key:
            raise CommandError(ErrorCode.AddFieldsDottedSubField,
                               f"Invalid {name} :: caused by :: cannot use dotted field "
                               f"name '{key}' in a sub object: {bson_repr(spec)}")
        parts = prefix + validate_path(key)
        if isinstance(value, dict) and len(value) > 1 and next(iter(value)).startswith("$"):
            raise CommandError(ErrorCode.AddFieldsExpressionNotSingleField,
                               f"Invalid {name} :: caused by :: an expression specification "
                               f"must contain exactly one field, the name of the "
                               f"expression. Found {len(value)} fields in "
                               f"{bson_repr(value)}")
        if isinstance(value, dict) and value and not next(iter(value)).startswith("$"):
            _document(root, value, parts, scope, name, top=False)
            continue
        try:
            root.insert(parts, Computed(compile_node(value, scope)))
        except CommandError as exc:
            if exc.code not in (ErrorCode.ProjectionPathCollisionPrefix, ErrorCode.ProjectionPathCollision):
                raise
            raise CommandError(ErrorCode.AddFieldsConflictingPaths,
                               f"Invalid {name} :: caused by :: specification contains "
                               "two conflicting paths. Cannot specify both "
                               f"'{'.'.join(parts)}' and a path that overlaps it: "
                               f"{bson_repr(spec)}") from None
