"""Whole-document replacement (also the last step of a pipeline update).

The replacement keeps the stored `_id` when it has none; changing `_id` is refused (66), and the
result must be storable (`_id` type, no top-level `$` names outside a DBRef).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ginkgodb.bsonutil.compare import compare
from ginkgodb.errors import CommandError, ErrorCode

from .render import render_element
from .validity import check_document
from .values import binary_equal, copy_value


def replace_document(original: Mapping, replacement: Mapping, *, inserting: bool = False,
                     allow_top_level_dollar: bool = False) -> dict:
    """The stored document after replacing `original` (returned as is when nothing changes)."""
    if "_id" in replacement or "_id" not in original:
        new = copy_value(replacement)
    else:
        new = {"_id": original["_id"]}
        new.update(copy_value(replacement))
    if binary_equal(original, new):
        return original  # type: ignore[return-value]
    validate_replacement(new, original=original,
                         allow_top_level_dollar=allow_top_level_dollar or inserting)
    return new


def validate_replacement(doc: Mapping, *, original: Mapping | None = None,
                         allow_top_level_dollar: bool = False) -> None:
    """Checks a document produced by a replacement: storable, and `_id` unchanged."""
    check_document(doc, allow_top_level_dollar=allow_top_level_dollar)
    if original is not None and "_id" in original:
        if "_id" not in doc:
            raise CommandError(ErrorCode.ImmutableField, "After applying the update, the '_id' "
                               "(required and immutable) field was found to have been removed")
        if compare(doc["_id"], original["_id"]) != 0:
            raise CommandError(ErrorCode.ImmutableField,
                               "After applying the update, the (immutable) field '_id' was "
                               f"found to have been altered to {render_element('_id', doc['_id'])}")


def id_first(doc: dict) -> dict:
    """A document about to be inserted keeps `_id` as its first field."""
    if "_id" not in doc or next(iter(doc)) == "_id":
        return doc
    out: dict[str, Any] = {"_id": doc["_id"]}
    for key, value in doc.items():
        if key != "_id":
            out[key] = value
    return out
