"""Collection handles: what the engine plans and writes with, built once per catalog entry.

A handle is as immutable as the entry it compiles (docs/design/seams.md): a catalog change
makes a new entry and so a new handle, and readers holding the old one keep a consistent view.
What changes with the data rather than the catalog (counts, capped totals) is in counters.py.
"""
from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import Any, Optional

from . import layout, record_format
from .access import access_method
from .access.entries import IndexEntries
from .catalog_entries import CollectionMeta
from .record_ids import CLUSTERED_RIDS, INT_RIDS


class Collection:
    """One collection's index access methods, shortcut-planner map and validator."""

    __slots__ = ("meta", "record_prefix", "indexes", "index_map", "capped", "codec", "clustered", "rids",
                 "record_key", "__dict__")

    def __init__(self, meta: CollectionMeta) -> None:
        from ..planner.fast import IndexMap
        self.meta = meta
        self.record_prefix = layout.record_prefix(meta.id)
        # a clustered collection keys its records by _id (clustered.py): its record ids are bytes
        self.clustered = "clusteredIndex" in meta.options
        self.rids = CLUSTERED_RIDS if self.clustered else INT_RIDS
        #: the key of the record with this id (the record id strategy's, with the prefix bound)
        self.record_key: Callable[[Any], bytes] = self.rids.record_key_of(self.record_prefix)
        self.indexes: list[IndexEntries] = [self._access(ix) for ix in meta.indexes]
        self.index_map = IndexMap(list(meta.indexes))
        self.capped = bool(meta.options.get("capped"))
        self.codec = meta.compression   # how insert/update store its records (record_format.py)

    @property
    def id(self) -> int:
        return self.meta.id

    @property
    def ns(self) -> str:
        return self.meta.ns

    @cached_property
    def id_index(self) -> Optional[IndexEntries]:
        """The _id index (or a clustered collection's): looked up once, the handle is immutable."""
        for ix in self.indexes:
            if ix.meta.is_id:
                return ix
        return None

    @cached_property
    def raw_fields(self) -> Optional[frozenset]:
        """The top-level fields (BSON names) the indexes make their keys from, when each index
        makes its one key from one field's value (IndexEntries.raw_field): a document being
        deleted then needs no decoding for its keys (records.delete_record). None otherwise."""
        fields = [ix.raw_field for ix in self.indexes]
        if not fields or None in fields:
            return None
        return frozenset(fields)

    def index(self, name: str) -> Optional[IndexEntries]:
        for ix in self.indexes:
            if ix.meta.name == name:
                return ix
        return None

    def _access(self, ix: Any) -> IndexEntries:
        if not self.clustered:
            return access_method(ix, self.meta.ns)
        if ix.options.get("clustered"):
            from .clustered import ClusteredIndex
            return ClusteredIndex(ix, self.meta.ns, self.record_prefix)
        runtime = access_method(ix, self.meta.ns)
        runtime.rids = CLUSTERED_RIDS
        return runtime

    def rid_of_record_key(self, key: bytes) -> Any:
        return self.rids.of_record_key(key)

    def new_rid(self, doc: dict) -> Optional[bytes]:
        """A clustered collection's record id for `doc` (None: ordinary ids are allocated)."""
        if not self.clustered:
            return None
        from .clustered import record_id_of
        return record_id_of(doc)

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
