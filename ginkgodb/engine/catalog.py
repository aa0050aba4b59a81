"""The catalog: which collections and indexes exist, persisted beside the data.

One BSON entry per collection (its options and index specs) under `layout.catalog_key`.
Entries are immutable values (`CollectionMeta`, `IndexMeta`): a change makes a new entry. A
`Catalog` is one generation of the whole set. Published catalogs are never changed; a write
batch edits a private copy (`edit()`) that becomes the next published catalog only when the
batch's storage transaction commits (docs/design/seams.md).
"""
from __future__ import annotations

import dataclasses
import uuid
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Iterator, Optional

import bson
from bson.binary import Binary, UuidRepresentation

from . import layout

if TYPE_CHECKING:
    from ..storage.kv import Snapshot
    from .collection import Collection

# Index spec fields we store and return as given (besides v, key, name).
INDEX_OPTION_FIELDS = ("unique", "sparse", "partialFilterExpression", "expireAfterSeconds", "hidden",
                       "collation", "weights", "default_language", "language_override",
                       "textIndexVersion", "2dsphereIndexVersion", "bits", "min", "max",
                       "wildcardProjection", "storageEngine", "background")


@dataclass(frozen=True, eq=False)
class IndexMeta:
    """One index of a collection, as persisted. Immutable: `evolve` makes a changed copy."""

    id: int
    name: str
    key: dict            # field -> direction (1, -1, "hashed", ...), in order
    options: dict = field(default_factory=dict)
    multikey_paths: frozenset = frozenset()

    def evolve(self, **changes: Any) -> "IndexMeta":
        return dataclasses.replace(self, **changes)

    @property
    def unique(self) -> bool:
        return self.name == "_id_" or bool(self.options.get("unique"))

    @property
    def sparse(self) -> bool:
        return bool(self.options.get("sparse"))

    @property
    def partial(self) -> Optional[dict]:
        return self.options.get("partialFilterExpression")

    @cached_property
    def collation(self) -> Any:
        """The index's Collation (None: simple); strings are keyed by it."""
        spec = self.options.get("collation")
        if not spec:
            return None
        from ..bsonutil.collation import from_spec
        return from_spec(spec)

    @property
    def pattern(self) -> list[tuple[str, Any]]:
        return list(self.key.items())

    @property
    def is_id(self) -> bool:
        return self.name == "_id_"

    def spec(self) -> dict:
        """The document listIndexes returns: {v, key, name, options...}."""
        out: dict = {"v": 2, "key": dict(self.key), "name": self.name}
        out.update(self.options)
        return out

    def to_doc(self) -> dict:
        return {"id": self.id, "name": self.name, "key": self.key, "options": self.options,
                "multikey": sorted(self.multikey_paths)}

    @classmethod
    def from_doc(cls, d: dict) -> "IndexMeta":
        return cls(d["id"], d["name"], d["key"], d.get("options", {}), frozenset(d.get("multikey", [])))


def _new_uuid() -> Binary:
    return Binary.from_uuid(uuid.uuid4(), UuidRepresentation.STANDARD)


@dataclass(frozen=True, eq=False)
class CollectionMeta:
    """One collection's catalog entry. Immutable: `evolve` makes a changed copy."""

    id: int
    db: str
    name: str
    options: dict = field(default_factory=dict)
    uuid: Binary = field(default_factory=_new_uuid)
    indexes: tuple = ()  # IndexMeta, the _id index first

    def evolve(self, **changes: Any) -> "CollectionMeta":
        if "indexes" in changes:
            changes["indexes"] = tuple(changes["indexes"])
        return dataclasses.replace(self, **changes)

    @property
    def ns(self) -> str:
        return f"{self.db}.{self.name}"

    @property
    def is_view(self) -> bool:
        return "viewOn" in self.options

    def index_named(self, name: str) -> Optional[IndexMeta]:
        for ix in self.indexes:
            if ix.name == name:
                return ix
        return None

    def to_bson(self) -> bytes:
        return bson.encode({"id": self.id, "options": self.options, "uuid": self.uuid,
                            "indexes": [ix.to_doc() for ix in self.indexes]})

    @classmethod
    def from_bson(cls, db: str, name: str, data: bytes) -> "CollectionMeta":
        d = bson.decode(data)
        return cls(d["id"], db, name, d.get("options", {}), d["uuid"],
                   tuple(IndexMeta.from_doc(x) for x in d.get("indexes", [])))


class Catalog:
    """Every collection entry at one generation, with a cache of their runtime handles.

    A published catalog is read-only. `edit()` gives a private copy for one write batch; the
    handles of unchanged entries carry over, since handles are immutable too.
    """

    def __init__(self, gen: int = 0, entries: Optional[dict] = None, handles: Optional[dict] = None,
                 *, editable: bool = False) -> None:
        self.gen = gen
        self._entries: dict[tuple[str, str], CollectionMeta] = entries if entries is not None else {}
        self._handles: dict[tuple[str, str], "Collection"] = handles if handles is not None else {}
        self._editable = editable

    @classmethod
    def load(cls, snap: "Snapshot") -> "Catalog":
        """The catalog as stored in `snap` (at the generation stored with it)."""
        entries = {}
        for key, value in snap.scan(layout.CATALOG, layout.RECORD):
            db, coll = layout.parse_catalog_key(key)
            entries[(db, coll)] = CollectionMeta.from_bson(db, coll, value)
        return cls(layout.stored_catalog_gen(snap), entries)

    # -- reading ----------------------------------------------------------------------------
    def get(self, db: str, name: str) -> Optional[CollectionMeta]:
        return self._entries.get((db, name))

    def collection(self, db: str, name: str) -> Optional["Collection"]:
        """The runtime handle of an existing collection (built once per entry)."""
        key = (db, name)
        meta = self._entries.get(key)
        if meta is None:
            return None
        handle = self._handles.get(key)
        if handle is None or handle.meta is not meta:
            from .collection import Collection
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
    def edit(self) -> "Catalog":
        return Catalog(self.gen + 1, dict(self._entries), dict(self._handles), editable=True)

    def put(self, meta: CollectionMeta) -> None:
        assert self._editable, "a published catalog is never changed"
        self._entries[(meta.db, meta.name)] = meta

    def remove(self, db: str, name: str) -> None:
        assert self._editable, "a published catalog is never changed"
        self._entries.pop((db, name), None)
        self._handles.pop((db, name), None)

    def freeze(self) -> "Catalog":
        self._editable = False
        return self
