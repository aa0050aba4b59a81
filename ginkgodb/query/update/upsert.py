"""The document an upsert starts from: the equality conditions of its query.

Equalities are collected through `$and` (and single-clause `$or`), `{$eq: v}`, single-value
`$in` and `$all`, then written in path order (`_id` first). Two equalities on one path, or on a
path and its prefix, cannot both hold: error 54.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from bson.regex import Regex

from ginkgodb.errors import CommandError, ErrorCode

from .replacement import id_first
from .values import copy_value

_DBREF_KEYS = ("$ref", "$id", "$db")


def upsert_seed(filter_spec: Mapping, *, only_id: bool = False) -> dict:
    """Seed document for an upsert; `only_id` for replacement updates (only `_id` is kept)."""
    found: list[tuple[str, Any]] = []
    _collect(filter_spec, found)
    found.sort(key=lambda item: item[0])
    if only_id:
        found = _id_equalities(found)
    accepted: list[tuple[list[str], Any]] = []
    for path, value in found:
        parts = path.split(".")
        _check_conflict(parts, accepted)
        accepted.append((parts, value))
    doc: dict[str, Any] = {}
    for parts, value in accepted:
        _set_path(doc, parts, copy_value(value))
    return id_first(doc)


def _collect(spec: Mapping, out: list[tuple[str, Any]]) -> None:
    for key, value in spec.items():
        if key == "$and" or (key == "$or" and isinstance(value, list) and len(value) == 1):
            for clause in value if isinstance(value, list) else ():
                if isinstance(clause, Mapping):
                    _collect(clause, out)
        elif key == "$expr":
            raise CommandError(ErrorCode.QueryFeatureNotAllowed,
                               "$expr is not allowed in this context")
        elif not key.startswith("$"):
            _collect_field(key, value, out)


def _collect_field(path: str, value: Any, out: list[tuple[str, Any]]) -> None:
    if isinstance(value, (Regex, re.Pattern)):
        return
    if not _is_operator_document(value):
        out.append((path, value))
        return
    for op, arg in value.items():
        if op == "$eq":
            out.append((path, arg))
        elif op == "$in" and isinstance(arg, list) and len(arg) == 1 and not _is_regex(arg[0]):
            out.append((path, arg[0]))
        elif op == "$all" and isinstance(arg, list):
            out.extend((path, v) for v in arg
                       if not _is_regex(v) and not (_is_operator_document(v)))


def _is_regex(value: Any) -> bool:
    return isinstance(value, (Regex, re.Pattern))


def _is_operator_document(value: Any) -> bool:
    if not isinstance(value, Mapping) or not value:
        return False
    first = next(iter(value))
    return first.startswith("$") and first not in _DBREF_KEYS


def _id_equalities(found: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    out = []
    for path, value in found:
        head = path.split(".", 1)[0]
        if head != "_id":
            continue
        if path != "_id":
            raise CommandError(ErrorCode.NotExactValueField,
                               "field at '_id' must be exactly specified, field at sub-path "
                               f"'{path}'found")
        out.append((path, value))
    return out


def _check_conflict(parts: list[str], accepted: list[tuple[list[str], Any]]) -> None:
    for other, _ in accepted:
        if parts[: len(other)] != other:
            continue
        path = ".".join(parts)
        if len(other) == len(parts):
            detail = f"path '{path}' is matched twice"
        else:
            detail = f"both paths '{path}' and '{'.'.join(other)}' are matched"
        raise CommandError(ErrorCode.NotSingleValueField,
                           f"cannot infer query fields to set, {detail}")


def _set_path(doc: dict, parts: list[str], value: Any) -> None:
    current = doc
    for part in parts[:-1]:
        nxt = current.get(part)
        if not isinstance(nxt, dict):
            nxt = {}
            current[part] = nxt
        current = nxt
    current[parts[-1]] = value
