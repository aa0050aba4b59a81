"""Database rule: too-many-collections."""
from __future__ import annotations

from .. import thresholds as T
from ..findings import Finding
from . import rule
from .common import human


@rule("too-many-collections", "database")
def too_many_collections(dbf) -> list[Finding]:
    n = dbf.collection_count
    if n < T.TOO_MANY_COLLECTIONS:
        return []
    floor = n * T.COLLECTION_MIN_BYTES + dbf.index_count * T.INDEX_MIN_BYTES
    return [Finding(
        "too-many-collections", "medium" if n >= 10 * T.TOO_MANY_COLLECTIONS else "low", dbf.name,
        f"{n} collections with {dbf.index_count} indexes in one database",
        "Merge collections of the same shape into one with a discriminating field (indexed), or "
        "spread them over databases: each collection and index has a fixed cost and a namespace.",
        {"collections": n, "indexes": dbf.index_count},
        {"fixedOverheadBytes": floor, "fixedOverheadText": human(floor)})]
