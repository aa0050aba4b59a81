"""The catalog: which collections and indexes exist, persisted beside the data.

One BSON entry per collection (its options and index specs) under `layout.catalog_key`.
Entries are immutable values (`CollectionMeta`, `IndexMeta`): a change makes a new entry. A
`Catalog` is one generation of the whole set. Published catalogs are never changed; a write
batch edits a private copy (`edit()`) that becomes the next published catalog only when the
batch's storage transaction commits (docs/design/seams.md).
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Optional

from . import layout
from .catalog_entries import INDEX_OPTION_FIELDS, CollectionMeta, IndexMeta
from .collection import Collection
from .zstd_dictionaries import load_dictionaries

__all__ = ["INDEX_OPTION_FIELDS", "Catalog", "CollectionMeta", "IndexMeta"]


class Catalog:
    """Every collection entry at one generation, with a cache of their runtime handles.

    A published catalog is read-only. `edit()` gives a private copy for one write batch; the
    handles of unchanged entries carry over, since handles are immutable too.
    """

    def __init__(self, gen: int = 0, entries: Optional[dict] = None, handles: Optional[dict] = None,
                 *, editable: bool = False) -> None:
        self.gen = gen
        self._entries: dict[tuple[str, str], CollectionMeta] = entries if entries is not None else {}
        self._handles: dict[tuple[str, str], Collection] = handles if handles is not None else {}
        self._editable = editable

    @classmethod
    def load(cls, snap: Any) -> Catalog:
        """The catalog as stored in `snap` (at the generation stored with it)."""
        entries = {}
        for key, value in snap.scan(layout.CATALOG, layout.RECORD):
            db, coll = layout.parse_catalog_key(key)
            entries[(db, coll)] = CollectionMeta.from_bson(db, coll, value)
        load_dictionaries(snap)
        return cls(layout.stored_catalog_gen(snap), entries)

    # -- reading ----------------------------------------------------------------------------
    def get(self, db: str, name: str) -> Optional[CollectionMeta]:
        return self._entries.get((db, name))

    def collection(self, db: str, name: str) -> Optional[Collection]:
        """The runtime handle of an existing collection (built once per entry)."""
        key = (db, name)
        meta = self._entries.get(key)
        if meta is None:
            return None
        handle = self._handles.get(key)
        if handle is None or handle.meta is not meta:
            handle = Collection(meta)
            self._handles[key] = handle  # a cache: safe to fill even on a published catalog
        return handle

    def all(self) -> Iterator[CollectionMeta]:
        return iter(list(self._entries.values()))

    def databases(self) -> list[str]:
        return sorted({db for db, _ in self._entries})

    def in_db(self, db: str) -> list[CollectionMeta]:
        return [m for (d, _), m in sorted(self._entries.items()) if d == db]

    def has_ids(self, coll_id: int, index_ids: tuple[int, ...] = ()) -> bool:
        """Does a collection with this id (and these index ids) still exist? (for cursors)"""
        for meta in self._entries.values():
            if meta.id == coll_id:
                present = {ix.id for ix in meta.indexes}
                return all(i in present for i in index_ids)
        return False

    # -- editing (a batch's private copy) -----------------------------------------------------
    def edit(self) -> Catalog:
        return Catalog(self.gen + 1, dict(self._entries), dict(self._handles), editable=True)

    def put(self, meta: CollectionMeta) -> None:
        assert self._editable, "a published catalog is never changed"
        self._entries[(meta.db, meta.name)] = meta

    def remove(self, db: str, name: str) -> None:
        assert self._editable, "a published catalog is never changed"
        self._entries.pop((db, name), None)
        self._handles.pop((db, name), None)

    def freeze(self) -> Catalog:
        self._editable = False
        return self
