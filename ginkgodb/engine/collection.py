"""Collection handles: what the engine plans and writes with, built once per catalog entry.

A handle is as immutable as the entry it compiles (docs/design/seams.md): a catalog change
makes a new entry and so a new handle, and readers holding the old one keep a consistent view.
What changes with the data rather than the catalog (counts, capped totals) is in counters.py.
"""
from __future__ import annotations

from functools import cached_property
from typing import Any, Optional

from . import layout, record_format
from .access import access_method
from .access.entries import IndexEntries
from .catalog_entries import CollectionMeta


class Collection:
    """One collection's index access methods, shortcut-planner map and validator."""

    __slots__ = ("meta", "record_prefix", "indexes", "index_map", "capped", "codec", "__dict__")

    def __init__(self, meta: CollectionMeta) -> None:
        from ..planner.fast import IndexMap
        self.meta = meta
        self.record_prefix = layout.record_prefix(meta.id)
        self.indexes: list[IndexEntries] = [access_method(ix, meta.ns) for ix in meta.indexes]
        self.index_map = IndexMap(list(meta.indexes))
        self.capped = bool(meta.options.get("capped"))
        self.codec = meta.compression   # how insert/update store its records (record_format.py)

    @property
    def id(self) -> int:
        return self.meta.id

    @property
    def ns(self) -> str:
        return self.meta.ns

    @property
    def id_index(self) -> Optional[IndexEntries]:
        for ix in self.indexes:
            if ix.meta.is_id:
                return ix
        return None

    def index(self, name: str) -> Optional[IndexEntries]:
        for ix in self.indexes:
            if ix.meta.name == name:
                return ix
        return None

    def record_key(self, rid: int) -> bytes:
        return self.record_prefix + layout.rid_bytes(rid)

    def stored(self, raw: bytes) -> bytes:
        """The value to store for BSON `raw` (compressed as the collection chose)."""
        return raw if self.codec == "none" else record_format.encode(raw, self.codec, self.meta.dictionary)

    @cached_property
    def validator(self) -> Any:
        """The compiled `validator` filter (None when the collection has none)."""
        spec = self.meta.options.get("validator")
        if not spec:
            return None
        from ..query.match import compile_filter
        return compile_filter(spec, where=False)

    def __repr__(self) -> str:
        return f"<Collection {self.ns} id={self.meta.id}>"
