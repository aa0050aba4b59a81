"""Per-document metadata a query produces (`{$meta: ...}`), carried in hidden fields.

One channel for every kind: a `$text` query's score travels with each document in the field
`TEXT_SCORE_FIELD`, a near query's distance and measured location in `GEO_NEAR_DISTANCE_FIELD`
and `GEO_NEAR_POINT_FIELD` (top-level names starting with `$`, which stored documents cannot
have and field paths cannot name), added by the engine's text or near stage and removed before
documents leave the engine. Expressions, sorts and projections compiled while
`providing(name)` is active read them; outside, `{$meta: name}` fails as mongod fails when no
stage produced the metadata (40218).
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

TEXT_SCORE = "textScore"
TEXT_SCORE_FIELD = "$textScore"
GEO_NEAR_DISTANCE = "geoNearDistance"
GEO_NEAR_DISTANCE_FIELD = "$geoNearDistance"
GEO_NEAR_POINT = "geoNearPoint"
GEO_NEAR_POINT_FIELD = "$geoNearPoint"

#: each metadata kind a stage produces -> the hidden field carrying it
FIELDS = {TEXT_SCORE: TEXT_SCORE_FIELD, GEO_NEAR_DISTANCE: GEO_NEAR_DISTANCE_FIELD,
          GEO_NEAR_POINT: GEO_NEAR_POINT_FIELD}
GEO_NEAR = (GEO_NEAR_DISTANCE, GEO_NEAR_POINT)

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


def provided() -> list[str]:
    """The hidden fields of the metadata available here (kept by inclusion projections)."""
    names = _AVAILABLE.get()
    return [field for name, field in FIELDS.items() if name in names]


def mentions(spec: Any, name: str | tuple[str, ...] = TEXT_SCORE) -> bool:
    """Whether a projection, sort or pipeline asks for `{$meta: name}` (or any of the names)
    anywhere."""
    if isinstance(spec, dict):
        meta = spec.get("$meta")
        if meta is not None and (meta == name if isinstance(name, str) else meta in name):
            return True
        return any(mentions(v, name) for v in spec.values())
    if isinstance(spec, list):
        return any(mentions(v, name) for v in spec)
    return False


def strip(doc: dict) -> dict:
    """The document without its metadata field, also where `$$ROOT` copied it into arrays or
    subdocuments ($push, $facet); removed in place."""
    for field in _HIDDEN:
        doc.pop(field, None)
    for value in doc.values():
        if isinstance(value, (dict, list)):
            _strip_nested(value)
    return doc


_HIDDEN = tuple(FIELDS.values())


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


_NEAR_OPERATORS = ("$near", "$nearSphere")


def has_near(filt: Any) -> bool:
    """Whether a filter holds a near operator (top level or under `$and`, where mongod allows
    it), whose documents carry a geoNearDistance and geoNearPoint."""
    if not isinstance(filt, dict):
        return False
    for key, value in filt.items():
        if key == "$and" and isinstance(value, list):
            if any(has_near(v) for v in value):
                return True
        elif isinstance(value, dict) and not key.startswith("$") and any(op in value for op in _NEAR_OPERATORS):
            return True
    return False


def of_filter(filt: Any) -> tuple[str, ...]:
    """The metadata the documents of a filter's query carry."""
    if has_text(filt):
        return (TEXT_SCORE,)
    if has_near(filt):
        return GEO_NEAR
    return ()


def for_filter(filt: Any):
    """`providing(...)` the metadata a filter's documents carry (textScore for a `$text`
    query, geoNearDistance and geoNearPoint for a near query), else a no-op block."""
    names = of_filter(filt)
    if names:
        return providing(*names)
    from contextlib import nullcontext
    return nullcontext()
