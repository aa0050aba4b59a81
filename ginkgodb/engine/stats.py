"""Sizes and counts for collStats, dbStats and listDatabases, measured from the stored bytes:
`data_size` is the documents' BSON size, `storage_size` what their (compressed) records take."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..storage.kv import prefix_end
from . import layout, record_format

ENTRY_OVERHEAD = 16  # per stored pair: an estimate of the B+tree's per-entry bookkeeping


@dataclass
class CollectionSizes:
    count: int = 0
    data_size: int = 0
    storage_size: int = 0
    index_sizes: dict = field(default_factory=dict)
    capped_max_docs: Optional[int] = None    # capped collections: `max` (0 when unlimited)
    capped_max_size: Optional[int] = None    # ... and `size`, rounded up to 256 bytes as mongod stores it

    @property
    def total_index_size(self) -> int:
        return sum(self.index_sizes.values())


def collection_sizes(engine, meta) -> CollectionSizes:
    out = CollectionSizes()
    if meta.options.get("capped"):
        from .capped import max_bytes
        out.capped_max_docs = int(meta.options.get("max") or 0)
        out.capped_max_size = max_bytes(meta.options)
    with engine.kv.snapshot() as txn:
        prefix = layout.record_prefix(meta.id)
        numbers = txn.get(layout.coll_stats_key(meta.id))
        if meta.compression == "none" and numbers is not None:
            # uncompressed records are stored as they are: the counts the writes keep give the
            # same figures as reading every record (collStats stays O(indexes) on large collections)
            from .batch import read_numbers
            kept = read_numbers(txn, meta.id)
            out.count, out.data_size = kept.count, kept.size
            out.storage_size = kept.size + kept.count * (len(prefix) + layout.RID_WIDTH + ENTRY_OVERHEAD)
        else:
            for key, raw in txn.scan(prefix, prefix_end(prefix)):
                out.count += 1
                out.data_size += record_format.document_size(raw)   # collStats' size: uncompressed
                out.storage_size += len(raw) + len(key) + ENTRY_OVERHEAD
        for ix in meta.indexes:
            prefix = layout.index_prefix(ix.id)
            if out.count > EXACT_INDEX_ENTRIES and _one_entry_per_document(ix):
                out.index_sizes[ix.name] = _estimated_index_bytes(txn, prefix, out.count)
            else:
                out.index_sizes[ix.name] = sum(len(k) + ENTRY_OVERHEAD
                                               for k, _ in txn.scan(prefix, prefix_end(prefix)))
    return out


#: indexes of collections up to this many documents are measured entry by entry
EXACT_INDEX_ENTRIES = 100_000
_KEYS_MEASURED = 10_000


def _one_entry_per_document(ix) -> bool:
    """A plain or hashed B-tree index without multikey paths, sparseness or a partial filter has
    exactly one entry per document."""
    return (not ix.multikey_paths and not ix.options.get("sparse") and "partialFilterExpression" not in ix.options
            and all(v == "hashed" or (isinstance(v, (int, float)) and not isinstance(v, bool))
                    for v in dict(ix.key).values()))


def _estimated_index_bytes(txn, prefix: bytes, entries: int) -> int:
    """The index's bytes from the average of its first keys (large indexes: reading every key of
    a million-entry index takes seconds, as mongod's collStats reads the storage engine's figures)."""
    total = n = 0
    for k, _ in txn.scan(prefix, prefix_end(prefix)):
        total += len(k) + ENTRY_OVERHEAD
        n += 1
        if n >= _KEYS_MEASURED:
            break
    return total * entries // n if n else 0


def database_sizes(engine, db: str) -> dict:
    colls = engine.catalog.in_db(db)
    sizes = [collection_sizes(engine, m) for m in colls]
    objects = sum(s.count for s in sizes)
    data = sum(s.data_size for s in sizes)
    storage = sum(s.storage_size for s in sizes)
    index = sum(s.total_index_size for s in sizes)
    return {"collections": len(colls), "objects": objects, "dataSize": data, "storageSize": storage,
            "indexes": sum(len(m.indexes) for m in colls), "indexSize": index}
