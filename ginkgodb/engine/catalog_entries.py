"""Catalog entries: one collection's and one index's persisted description, as immutable values.

A change makes a new entry (`evolve`); entries are shared between catalog generations, so one
is never changed in place (docs/design/seams.md).
"""
from __future__ import annotations

import dataclasses
import uuid
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Optional

import bson
from bson.binary import Binary, UuidRepresentation
from bson.int64 import Int64

# Index spec fields we store and return as given (besides v, key, name).
INDEX_OPTION_FIELDS = ("unique", "sparse", "partialFilterExpression", "expireAfterSeconds", "hidden",
                       "collation", "weights", "default_language", "language_override",
                       "textIndexVersion", "2dsphereIndexVersion", "bits", "min", "max",
                       "wildcardProjection", "storageEngine", "background", "synonyms", "textIndexBuild")


#: options kept in the catalog entry that listIndexes does not show (a text index's key format)
INTERNAL_OPTIONS = frozenset({"textKeyFormat", "textBuildState",   # ... and a background build's state
                              "s2KeyFormat"})


@dataclass(frozen=True, eq=False)
class IndexMeta:
    """One index of a collection, as persisted. Immutable: `evolve` makes a changed copy."""

    id: int
    name: str
    key: dict            # field -> direction (1, -1, "hashed", ...), in order
    options: dict = field(default_factory=dict)
    multikey_paths: frozenset = frozenset()

    def evolve(self, **changes: Any) -> IndexMeta:
        return dataclasses.replace(self, **changes)

    @cached_property
    def unique(self) -> bool:
        return self.name == "_id_" or bool(self.options.get("unique"))

    @cached_property
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
        return self.name == "_id_" or bool(self.options.get("clustered"))

    def spec(self) -> dict:
        """The document listIndexes returns: {v, key, name, options...}."""
        out: dict = {"v": 2, "key": dict(self.key), "name": self.name}
        out.update((k, v) for k, v in self.options.items() if k not in INTERNAL_OPTIONS)
        if self.options.get("clustered"):
            out.pop("expireAfterSeconds", None)   # the collection's option, as mongod lists it
        return out

    def to_doc(self) -> dict:
        return {"id": self.id, "name": self.name, "key": self.key, "options": self.options,
                "multikey": sorted(self.multikey_paths)}

    @classmethod
    def from_doc(cls, d: dict) -> IndexMeta:
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
    #: how its records are stored (record_format.CODECS): chosen at create, fixed for its life
    compression: str = "none"
    #: the trained zstd dictionary its new records use (record_format.dictionary_id; 0: none)
    dictionary: int = 0

    def evolve(self, **changes: Any) -> CollectionMeta:
        if "indexes" in changes:
            changes["indexes"] = tuple(changes["indexes"])
        return dataclasses.replace(self, **changes)

    @cached_property
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
        entry = {"id": self.id, "options": self.options, "uuid": self.uuid,
                 "indexes": [ix.to_doc() for ix in self.indexes]}
        if self.compression != "none":   # absent in entries written before compression existed
            entry["compression"] = self.compression
        if self.dictionary:              # absent unless a dictionary was trained
            entry["dictionary"] = Int64(self.dictionary)
        return bson.encode(entry)

    @classmethod
    def from_bson(cls, db: str, name: str, data: bytes) -> CollectionMeta:
        d = bson.decode(data)
        return cls(d["id"], db, name, d.get("options", {}), d["uuid"],
                   tuple(IndexMeta.from_doc(x) for x in d.get("indexes", [])), d.get("compression", "none"),
                   int(d.get("dictionary", 0)))
