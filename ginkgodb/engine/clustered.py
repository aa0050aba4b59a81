"""Clustered collections: records keyed by their `_id`, with no separate `_id` index.

A clustered collection's record key is `layout.record_prefix(id) + encode_key([_id])` instead of
`+ u64 record id`, so its records are in `_id` order and the records themselves are its `_id`
index. Its record ids are those encoded keys (bytes); a secondary index entry ends with the
record id followed by its length as a u32, so the id can be read back from the end of the entry.
Spec: docs/design/clustered-collections.md (record key format 1).
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Optional

from ..bsonutil import keycodec
from ..errors import CommandError, ErrorCode
from .access.btree import BtreeAccess
from .catalog_entries import CollectionMeta, IndexMeta

CLUSTERED_FORMAT = 1     # the record key format of clustered collections (catalog entry field)


class ClusteredIndex(BtreeAccess):
    """The clustered `_id` index: its entries are the collection's records. Writing a record
    writes its entry, so `add`/`remove` do nothing; uniqueness is the record key's."""

    kind = "clustered"

    def __init__(self, meta: IndexMeta, ns: str, record_prefix: bytes) -> None:
        super().__init__(meta, ns)
        self.prefix = record_prefix
        self.raw_field = None   # its entries are the records: nothing to remove apart

    def rid_of_entry(self, entry: bytes) -> Any:
        return entry[len(self.prefix):]

    def key_of_entry(self, entry: bytes) -> bytes:
        return entry[len(self.prefix):]

    def check_unique(self, txn: Any, keys: Any, rid: Any, doc: dict) -> None:
        for key in keys:
            if txn.get(self.prefix + key) is not None:
                raise self.duplicate_error(key, doc)

    def add(self, txn: Any, keys: Any, rid: Any) -> None:
        return None

    def add_entries(self, txn: Any, entries: Iterable[bytes]) -> None:
        return None

    def remove(self, txn: Any, keys: Any, rid: Any) -> None:
        return None


def clustered_spec(options: dict) -> Optional[dict]:
    """The collection's `clusteredIndex` option (None for an ordinary collection)."""
    spec = options.get("clusteredIndex")
    return spec if isinstance(spec, dict) else None


def clustered_index_meta(index_id: int, options: dict) -> IndexMeta:
    """The catalog's entry for the clustered index of a collection created with `options`; its
    `expireAfterSeconds` (the collection's) makes the TTL monitor expire records by `_id` date."""
    spec = options["clusteredIndex"]
    index_options: dict = {"unique": True, "clustered": True}
    if "expireAfterSeconds" in options:
        index_options["expireAfterSeconds"] = options["expireAfterSeconds"]
    return IndexMeta(index_id, spec.get("name", "_id_"), {"_id": 1}, index_options)


def record_id_of(doc: dict) -> bytes:
    """A clustered collection's record id for `doc`: its `_id`'s key encoding."""
    if "_id" not in doc:
        raise CommandError(ErrorCode.InternalError, "a document without _id reached a clustered collection")
    return keycodec.encode_key((doc["_id"],))


def set_ttl(batch: Any, meta: CollectionMeta, seconds: Optional[float]) -> None:
    """A clustered collection's `expireAfterSeconds` changed (None removes it): the collection's
    option and its clustered index's, one catalog change."""
    options = {k: v for k, v in meta.options.items() if k != "expireAfterSeconds"}
    if seconds is not None:
        options["expireAfterSeconds"] = seconds
    indexes = []
    for ix in meta.indexes:
        if ix.options.get("clustered"):
            ix_options = {k: v for k, v in ix.options.items() if k != "expireAfterSeconds"}
            if seconds is not None:
                ix_options["expireAfterSeconds"] = seconds
            ix = ix.evolve(options=ix_options)
        indexes.append(ix)
    batch.save_meta(meta.evolve(options=options, indexes=indexes), "collMod",
                    options={"expireAfterSeconds": seconds if seconds is not None else "off"},
                    old=dict(meta.options))
