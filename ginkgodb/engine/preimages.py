"""Pre-images for change streams: `config.system.preimages`, as mongod keeps them.

A collection created or modified with `changeStreamPreAndPostImages: {enabled: true}` gets the
document as it was before each update, replace and delete recorded here, by the oplog writer in
the same storage transaction as the write: `{_id: {nsUUID, ts, applyOpsIndex}, preImage,
operationTime}`. Records are appended in commit order, so when the oplog is truncated the
pre-images older than its new first entry are the first records here (docs/design/change-streams.md).
"""
from __future__ import annotations

import datetime
from typing import Any, Optional

import bson
from bson.int64 import Int64
from bson.raw_bson import RawBSONDocument
from bson.timestamp import Timestamp

from ..storage.kv import prefix_end
from . import layout, record_format
from .batch import WriteBatch

DB, COLL = "config", "system.preimages"


def preimage_id(uuid: Any, ts: Timestamp, index: int) -> dict:
    return {"nsUUID": uuid, "ts": ts, "applyOpsIndex": Int64(index)}


def record(batch: WriteBatch, uuid: Any, ts: Timestamp, index: int, wall_ms: int, before: bytes) -> None:
    from .ddl import create_collection
    from .records import insert_record
    coll = batch.collection(DB, COLL)
    if coll is None:
        create_collection(batch, DB, COLL, {}, implicit=True)
        coll = batch.collection(DB, COLL)
        assert coll is not None
    wall = datetime.datetime.fromtimestamp(wall_ms / 1000, datetime.UTC).replace(tzinfo=None)
    doc = {"_id": preimage_id(uuid, ts, index), "preImage": RawBSONDocument(before), "operationTime": wall}
    insert_record(batch, coll, doc, bson.encode(doc))


def expire_before(batch: WriteBatch, ts: Timestamp) -> None:
    """Remove the pre-images of entries older than `ts` (the oplog's new first entry)."""
    from .records import delete_record
    coll = batch.collection(DB, COLL)
    if coll is None:
        return
    doomed = []
    for key, value in batch.txn.scan(coll.record_prefix, prefix_end(coll.record_prefix)):
        raw = record_format.document(value)
        doc = bson.decode(raw)
        if doc["_id"]["ts"] >= ts:
            break
        doomed.append((layout.rid_of_record_key(key), doc, raw))
    for rid, doc, raw in doomed:
        delete_record(batch, coll, rid, doc, raw)


def lookup(reader: Any, uuid: Any, ts: Timestamp, index: int) -> Optional[dict]:
    """The pre-image recorded for the event at (`ts`, `index`) of collection `uuid`, or None."""
    from . import plan_builder as Q
    coll = reader.catalog.collection(DB, COLL)
    if coll is None:
        return None
    built = Q.build(coll, reader, Q.FindRequest(filter={"_id": preimage_id(uuid, ts, index)}, limit=1))
    for _, raw, doc in built.root.rows():
        found = doc if doc is not None else bson.decode(raw)
        return found.get("preImage")
    return None
