"""Dotted field paths ("a.b.0") split into their parts, for every layer that walks documents."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def split_path(path: str) -> tuple[str, ...]:
    """The parts of a dotted path, unvalidated ("a..b" gives an empty part)."""
    return tuple(path.split("."))


# The `$`-prefixed names a field path may still hold (mongod's FieldPath allows them): the
# fields of a DBRef, so `link.$id` reads a reference's id.
DBREF_FIELD_NAMES = frozenset({"$id", "$ref", "$db"})


def refused_dollar_name(part: str) -> bool:
    """True for a path component mongod refuses with 16410 (`$`-prefixed, not a DBRef field)."""
    return part.startswith("$") and part not in DBREF_FIELD_NAMES


def embedded_value(doc: Mapping, path: str, missing: Any = None) -> Any:
    """The value at dotted `path` through embedded documents only (no array traversal: a shard
    key's rule), or `missing` when some part is absent."""
    value: Any = doc
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return missing
        value = value[part]
    return value
