"""Dotted field paths ("a.b.0") split into their parts, for every layer that walks documents."""
from __future__ import annotations


def split_path(path: str) -> tuple[str, ...]:
    """The parts of a dotted path, unvalidated ("a..b" gives an empty part)."""
    return tuple(path.split("."))


# The `$`-prefixed names a field path may still hold (mongod's FieldPath allows them): the
# fields of a DBRef, so `link.$id` reads a reference's id.
DBREF_FIELD_NAMES = frozenset({"$id", "$ref", "$db"})


def refused_dollar_name(part: str) -> bool:
    """True for a path component mongod refuses with 16410 (`$`-prefixed, not a DBRef field)."""
    return part.startswith("$") and part not in DBREF_FIELD_NAMES
