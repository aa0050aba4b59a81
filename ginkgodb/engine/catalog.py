"""The catalog: which collections and indexes exist, persisted beside the data.

One BSON entry per collection (its options and index specs) under `layout.catalog_key`. The
in-memory copy is rebuilt at open and changed only under the engine's write lock, in the same
storage transaction as the data it describes.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Optional

import bson
from bson.binary import Binary, UuidRepresentation

from . import layout

# Index spec fields we store and return as given (besides v, key, name).
INDEX_OPTION_FIELDS = ("unique", "sparse", "partialFilterExpression", "expireAfterSeconds", "hidden",
                       "collation", "weights", "default_language", "language_override",
                       "textIndexVersion", "2dsphereIndexVersion", "bits", "min", "max",
                       "wildcardProjection", "storageEngine", "background")


@dataclass
class IndexMeta:
    id: int
    name: str
    key: dict            # field -> direction (1, -1, "hashed", ...), in order
    options: dict = field(default_factory=dict)
    multikey_paths: set = field(default_factory=set)
    ready: bool = True

    @property
    def unique(self) -> bool:
        return self.name == "_id_" or bool(self.options.get("unique"))

    @property
    def sparse(self) -> bool:
        return bool(self.options.get("sparse"))

    @property
    def partial(self) -> Optional[dict]:
        return self.options.get("partialFilterExpression")

    @property
    def collation(self) -> Any:
        """The index's Collation (None: simple); strings are keyed by it."""
        spec = self.options.get("collation")
        if not spec:
            return None
        from ..bsonutil.collation import from_spec
        cached = self.__dict__.get("_collation")
        if cached is None or cached.spec != spec:
            cached = from_spec(spec)
            self.__dict__["_collation"] = cached
        return cached

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
        return cls(d["id"], d["name"], d["key"], d.get("options", {}), set(d.get("multikey", [])))


@dataclass
class CollectionMeta:
    id: int
    db: str
    name: str
    options: dict = field(default_factory=dict)
    uuid: Binary = field(default_factory=lambda: Binary.from_uuid(uuid.uuid4(), UuidRepresentation.STANDARD))
    indexes: list = field(default_factory=list)  # list[IndexMeta], _id index first

    @property
    def ns(self) -> str:
        return f"{self.db}.{self.name}"

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
                   [IndexMeta.from_doc(x) for x in d.get("indexes", [])])


class Catalog:
    """In-memory view of the persisted catalog. REQUIRES: mutations under the engine write lock."""

    def __init__(self) -> None:
        self.collections: dict[tuple[str, str], CollectionMeta] = {}
        self._next_id = 1

    def load(self, txn) -> None:
        raw = txn.get(layout.META_NEXT_ID)
        self._next_id = layout.unpack_u64(raw) if raw else 1
        for key, value in txn.scan(layout.CATALOG, layout.RECORD):
            db, coll = layout.parse_catalog_key(key)
            self.collections[(db, coll)] = CollectionMeta.from_bson(db, coll, value)
        if txn.write and txn.get(layout.META_FORMAT) is None:
            txn.put(layout.META_FORMAT, layout.pack_u64(layout.FORMAT_VERSION))

    def alloc_id(self, txn) -> int:
        n = self._next_id
        self._next_id += 1
        txn.put(layout.META_NEXT_ID, layout.pack_u64(self._next_id))
        return n

    def get(self, db: str, coll: str) -> Optional[CollectionMeta]:
        return self.collections.get((db, coll))

    def save(self, txn, meta: CollectionMeta) -> None:
        txn.put(layout.catalog_key(meta.db, meta.name), meta.to_bson())
        self.collections[(meta.db, meta.name)] = meta

    def remove(self, txn, meta: CollectionMeta) -> None:
        txn.delete(layout.catalog_key(meta.db, meta.name))
        self.collections.pop((meta.db, meta.name), None)

    def databases(self) -> list[str]:
        return sorted({db for db, _ in self.collections})

    def in_db(self, db: str) -> list[CollectionMeta]:
        return [m for (d, _), m in sorted(self.collections.items()) if d == db]
