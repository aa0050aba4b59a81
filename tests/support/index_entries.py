"""Every index's entries as storage holds them, beside the entries the stored documents make: the
check that index maintenance (inserts, updates, deletes) leaves each index holding exactly its
documents' keys."""
from __future__ import annotations

from typing import Any

import bson

from ginkgodb.engine import layout
from ginkgodb.storage.kv import prefix_end


def entries(engine: Any, state: Any) -> tuple[dict[str, list[bytes]], dict[str, list[bytes]]]:
    """({index name: its stored entries}, {index name: the entries the stored documents make}),
    each entry its key and record id, sorted, read in one storage transaction."""
    with engine.kv.begin() as txn:
        docs = {layout.rid_of_record_key(k): bson.decode(v)
                for k, v in txn.scan(state.record_prefix, prefix_end(state.record_prefix))}
        stored = {ix.meta.name: sorted(k[len(ix.prefix):] for k, _ in txn.scan(ix.prefix, prefix_end(ix.prefix)))
                  for ix in state.indexes}
    made = {ix.meta.name: sorted(key + layout.rid_bytes(rid) for rid, d in docs.items() for key in ix.keys(d)[0])
            for ix in state.indexes}
    return stored, made


def assert_indexes_match_documents(engine: Any, state: Any) -> None:
    stored, made = entries(engine, state)
    assert stored == made
