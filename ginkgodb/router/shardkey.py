"""A shard key pattern: which fields, in which order, which one is hashed; a document's key.

Keys are compared as key-codec bytes (`encode_key`), the order mongod's index on the shard key
has; a hashed field contributes mongod's hashed-index value (`hash_value`), so chunk bounds of a
hashed key are the same int64 ranges mongod would make.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bson.int64 import Int64
from bson.max_key import MaxKey
from bson.min_key import MinKey

from ..bsonutil.keycodec import encode_key
from ..bsonutil.keyhash import hash_value
from ..bsonutil.paths import embedded_value
from ..errors import CommandError, ErrorCode

_MISSING = object()


class ShardKey:
    """`{a: 1, _id: 1}` or `{x: "hashed"}` (at most one hashed field, as 7.0)."""

    __slots__ = ("pattern", "fields", "hashed")

    def __init__(self, pattern: Mapping[str, Any]) -> None:
        if not isinstance(pattern, Mapping) or not pattern:
            raise CommandError(ErrorCode.BadValue, "Shard key pattern must be a non-empty object")
        self.pattern = dict(pattern)
        self.fields = list(self.pattern)
        hashed = [f for f, v in self.pattern.items() if v == "hashed"]
        for v in self.pattern.values():
            if v != "hashed" and not (isinstance(v, (int, float)) and not isinstance(v, bool) and v == 1):
                raise CommandError(ErrorCode.BadValue,
                                   f"Unsupported shard key pattern {self.pattern}. Pattern must either be a single "
                                   "hashed field, or a list of ascending fields")
        if len(hashed) > 1:
            raise CommandError(ErrorCode.BadValue,
                               f"Unsupported shard key pattern {self.pattern}. Pattern must either be a single "
                               "hashed field, or a list of ascending fields")
        self.hashed = self.fields.index(hashed[0]) if hashed else -1

    @property
    def is_hashed(self) -> bool:
        return self.hashed >= 0

    def values(self, doc: Mapping) -> list[Any]:
        """The document's shard key values (a missing field is null, as 7.0's routing);
        an array is refused as mongod refuses it."""
        out = []
        for i, f in enumerate(self.fields):
            v = embedded_value(doc, f, _MISSING)
            if v is _MISSING:
                v = None
            if isinstance(v, list):
                raise CommandError(ErrorCode.ShardKeyNotFound,
                                   f"Shard key cannot contain an array (field '{f}')")
            out.append(Int64(hash_value(v)) if i == self.hashed else v)
        return out

    def key_of(self, doc: Mapping) -> bytes:
        return encode_key(self.values(doc))

    def has_all(self, doc: Mapping) -> bool:
        return all(embedded_value(doc, f, _MISSING) is not _MISSING for f in self.fields)

    def encode(self, values: list[Any]) -> bytes:
        """Bytes of key values already in key space (hashed fields hashed)."""
        return encode_key(values)

    def bound(self, doc: Mapping) -> bytes:
        """The bytes of a chunk bound document ({field: value} in key space)."""
        return encode_key([doc[f] for f in self.fields])

    def global_min(self) -> dict:
        return {f: MinKey() for f in self.fields}

    def global_max(self) -> dict:
        return {f: MaxKey() for f in self.fields}

    def bound_doc(self, values: list[Any]) -> dict:
        return dict(zip(self.fields, values))

    def index_spec(self) -> dict:
        return dict(self.pattern)
