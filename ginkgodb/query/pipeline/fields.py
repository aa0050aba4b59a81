"""Document field helpers for stages: validated paths, copy-on-write setting and removal."""
from __future__ import annotations

from typing import Any

from ginkgodb.bsonutil.paths import refused_dollar_name
from ginkgodb.errors import CommandError, ErrorCode
from ginkgodb.query.expr import MISSING


def validate_path(path: str) -> list[str]:
    if not path:
        raise CommandError(ErrorCode.FieldPathEmpty,
                           "FieldPath cannot be constructed with empty string")
    if path.endswith("."):
        raise CommandError(ErrorCode.FieldPathTrailingDot, "FieldPath must not end with a '.'.")
    parts = path.split(".")
    for part in parts:
        if not part:
            raise CommandError(ErrorCode.FieldPathEmptyName,
                               "FieldPath field names may not be empty strings.")
        if refused_dollar_name(part):
            raise CommandError(ErrorCode.FieldPathDollarPrefixed,
                               "FieldPath field names may not start with '$'. Consider "
                               "using $getField or $setField.")
        if "\0" in part:
            raise CommandError(ErrorCode.FieldPathContainsNull,
                               "FieldPath field names may not contain '\\0'.")
    return parts


def get_doc_path(doc: dict, parts: list[str]) -> Any:
    """A nested field through documents only (arrays are not traversed), MISSING if absent."""
    v: Any = doc
    for p in parts:
        if not isinstance(v, dict):
            return MISSING
        v = v.get(p, MISSING)
        if v is MISSING:
            return MISSING
    return v


def set_doc_path(doc: dict, parts: list[str], value: Any) -> dict:
    """A copy of `doc` with the nested field set; intermediate non-documents are replaced."""
    out = dict(doc)
    if len(parts) == 1:
        out[parts[0]] = value
        return out
    sub = out.get(parts[0])
    out[parts[0]] = set_doc_path(sub if isinstance(sub, dict) else {}, parts[1:], value)
    return out
