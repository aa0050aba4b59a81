"""Update paths (mongod's FieldRef): dotted names split into parts, and the part kinds.

A part is a field name, an array index (all digits), the positional `$`, or an array-filter
identifier `$[]` / `$[<id>]`.
"""
from __future__ import annotations

import functools

from ginkgodb.errors import CommandError, ErrorCode


def check_updatable(path: str) -> list[str]:
    """Parts of `path`; error 56 for an empty path or an empty part (`a..b`)."""
    if path == "":
        raise CommandError(ErrorCode.EmptyFieldName, "An empty update path is not valid.")
    parts = path.split(".")
    if "" in parts:
        raise CommandError(ErrorCode.EmptyFieldName,
                           f"The update path '{path}' contains an empty field name, "
                           "which is not allowed.")
    return parts


def array_index(part: str) -> int | None:
    """The array index a path part names (digits only, as parseUnsignedBase10Integer)."""
    if part.isdigit() and part.isascii():
        return int(part)
    return None


def is_positional(part: str) -> bool:
    return part == "$"


def is_array_filter(part: str) -> bool:
    return len(part) >= 3 and part.startswith("$[") and part.endswith("]")


def array_filter_id(part: str) -> str:
    """`$[x]` -> 'x'; `$[]` -> ''."""
    return part[2:-1]


def dotted(parts: list[str]) -> str:
    return ".".join(parts)


def _field_cmp(a: str, b: str) -> int:
    """mongod's cmpPathsAndArrayIndexes: unpadded numbers in numeric order, else string order."""
    numeric = (a[:1].isdigit() and b[:1].isdigit() and not (a[0] == "0" and len(a) > 1)
               and not (b[0] == "0" and len(b) > 1))
    if numeric and len(a) != len(b):
        return -1 if len(a) < len(b) else 1
    return (a > b) - (a < b)


field_order_key = functools.cmp_to_key(_field_cmp)


def field_before(a: str, b: str) -> bool:
    """True when child `a` applies before child `b`."""
    return _field_cmp(a, b) < 0
