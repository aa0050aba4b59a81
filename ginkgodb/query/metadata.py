"""Per-document metadata a query produces (`{$meta: "textScore"}`), carried in a hidden field.

A `$text` query's score travels with each document in the field `TEXT_SCORE_FIELD` (a
top-level name starting with `$`, which stored documents cannot have and field paths cannot
name), added by the engine's text stage and removed before documents leave the engine.
Expressions, sorts and projections compiled while `providing("textScore")` is active read it;
outside, `{$meta: "textScore"}` fails as mongod fails when no `$text` produced the metadata.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

TEXT_SCORE = "textScore"
TEXT_SCORE_FIELD = "$textScore"

_AVAILABLE: ContextVar[frozenset] = ContextVar("ginkgodb_query_metadata", default=frozenset())


@contextmanager
def providing(*names: str) -> Iterator[None]:
    """Compile, inside this block, expressions that may read the named metadata."""
    token = _AVAILABLE.set(_AVAILABLE.get() | frozenset(names))
    try:
        yield
    finally:
        _AVAILABLE.reset(token)


def available(name: str) -> bool:
    return name in _AVAILABLE.get()


def mentions(spec: Any, name: str = TEXT_SCORE) -> bool:
    """Whether a projection, sort or pipeline asks for `{$meta: name}` anywhere."""
    if isinstance(spec, dict):
        if spec.get("$meta") == name:
            return True
        return any(mentions(v, name) for v in spec.values())
    if isinstance(spec, list):
        return any(mentions(v, name) for v in spec)
    return False


def strip(doc: dict) -> dict:
    """The document without its metadata field, also where `$$ROOT` copied it into arrays or
    subdocuments ($push, $facet); removed in place."""
    doc.pop(TEXT_SCORE_FIELD, None)
    for value in doc.values():
        if isinstance(value, (dict, list)):
            _strip_nested(value)
    return doc


def _strip_nested(value: Any) -> None:
    if isinstance(value, dict):
        strip(value)
    else:
        for item in value:
            if isinstance(item, (dict, list)):
                _strip_nested(item)


def has_text(filt: Any) -> bool:
    """Whether a filter's logical tree holds a `$text` (whose documents carry a textScore)."""
    if not isinstance(filt, dict):
        return False
    for key, value in filt.items():
        if key == "$text":
            return True
        if key in ("$and", "$or", "$nor") and isinstance(value, list) and any(has_text(v) for v in value):
            return True
    return False


def for_filter(filt: Any):
    """`providing("textScore")` when the filter is a `$text` query, else a no-op block."""
    if has_text(filt):
        return providing(TEXT_SCORE)
    from contextlib import nullcontext
    return nullcontext()
