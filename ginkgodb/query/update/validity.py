"""Storage validity of updated documents (mongod's storage_validation).

Since 5.0 only *top-level* `$`-prefixed names are refused in updated documents (DBRef's `$ref`,
`$id`, `$db` excepted, in that order); nested ones are allowed. `_id` may not be an array, a
regex or undefined, and may not hold `$`-prefixed names at any depth.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from bson.regex import Regex

from ginkgodb.bsonutil.types import Undefined, type_name
from ginkgodb.errors import CommandError, ErrorCode


def check_top_level_dollar(name: str, value: Any, parent: Mapping, *, created: bool = False) -> None:
    """Refuse a top-level `$name` unless it is part of a well-formed DBRef."""
    keys = list(parent.keys())
    if created:
        left = keys[-1] if keys else None
        right = None
    else:
        i = keys.index(name)
        left = keys[i - 1] if i > 0 else None
        right = keys[i + 1] if i + 1 < len(keys) else None
    values = dict(parent)
    values[name] = value
    _check_dbref_part(name, left, right, values, keys)


def _check_dbref_part(name: str, left: str | None, right: str | None, values: dict,
                      keys: list[str]) -> None:
    if name == "$db":
        if not isinstance(values[name], str):
            raise CommandError(ErrorCode.InvalidDBRef, "The DBRef $db field must be a String, "
                               f"not a {type_name(values[name])}")
        if left != "$id":
            raise CommandError(ErrorCode.InvalidDBRef,
                               "Found $db field without a $id before it, which is invalid.")
        name, left, right = _neighbours(left, keys)
    if name == "$id":
        if left != "$ref":
            raise CommandError(ErrorCode.InvalidDBRef,
                               "Found $id field without a $ref before it, which is invalid.")
        name, left, right = _neighbours(left, keys)
    if name == "$ref":
        if not isinstance(values[name], str):
            raise CommandError(ErrorCode.InvalidDBRef, "The DBRef $ref field must be a String, "
                               f"not a {type_name(values[name])}")
        if right != "$id":
            raise CommandError(ErrorCode.InvalidDBRef,
                               "The DBRef $ref field must be followed by a $id field")
        return
    raise dollar_prefixed_error(name, name)


def _neighbours(name: str, keys: list[str]) -> tuple[str, str | None, str | None]:
    i = keys.index(name)
    return name, keys[i - 1] if i > 0 else None, keys[i + 1] if i + 1 < len(keys) else None


def dollar_prefixed_error(name: str, full_name: str) -> CommandError:
    return CommandError(ErrorCode.DollarPrefixedFieldName,
                        f"The dollar ($) prefixed field '{name}' in '{full_name}' is not allowed "
                        "in the context of an update's replacement document. Consider using an "
                        "aggregation pipeline with $replaceWith.")


def check_id_value(value: Any) -> None:
    """mongod's storageValidIdField."""
    if isinstance(value, (list, tuple, Regex, re.Pattern, Undefined)):
        raise CommandError(ErrorCode.InvalidIdField,
                           f"The '_id' value cannot be of type {type_name(value)}")
    if isinstance(value, Mapping):
        problem = _embedded_dollar(value)
        if problem is not None:
            raise CommandError(ErrorCode.DollarPrefixedFieldName,
                               "_id fields may not contain '$'-prefixed fields: "
                               f"{problem} is not valid for storage.")


def _embedded_dollar(value: Any) -> str | None:
    """First `$`-prefixed name inside an embedded document (a leading DBRef is allowed)."""
    if isinstance(value, Mapping):
        keys = list(value.keys())
        start = 0
        if len(keys) >= 2 and keys[0] == "$ref" and keys[1] == "$id":
            start = 3 if len(keys) >= 3 and keys[2] == "$db" else 2
        for i, key in enumerate(keys):
            if i >= start and key.startswith("$"):
                return key
            found = _embedded_dollar(value[key])
            if found is not None:
                return found
    elif isinstance(value, list):
        for item in value:
            found = _embedded_dollar(item)
            if found is not None:
                return found
    return None


def check_document(doc: Mapping, *, allow_top_level_dollar: bool) -> None:
    """Validate a whole document about to be stored by an update (replacement or upsert)."""
    keys = list(doc.keys())
    for i, key in enumerate(keys):
        if key == "_id":
            check_id_value(doc[key])
        if key.startswith("$") and not allow_top_level_dollar:
            left = keys[i - 1] if i > 0 else None
            right = keys[i + 1] if i + 1 < len(keys) else None
            _check_dbref_part(key, left, right, dict(doc), keys)
