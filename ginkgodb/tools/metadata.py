"""`<coll>.metadata.json`: a collection's options, indexes, UUID and type, as mongodump writes it.

    {"options": {...}, "indexes": [{"v": 2, "key": {...}, "name": ...}, ...],
     "uuid": "<32 hex digits>", "collectionName": "...", "type": "collection" | "view"}

in canonical Extended JSON, compact. `options` is left out when empty, `uuid` for views (which
have none). Views have `options: {viewOn, pipeline[, collation]}`, no indexes and no `.bson` file.
"""
from __future__ import annotations

import uuid as uuidlib
from dataclasses import dataclass, field
from typing import Any

from bson.binary import Binary

from .extjson import canonical_text, parse_document
from .log import ToolError


@dataclass
class CollectionMeta:
    name: str
    type: str = "collection"
    options: dict = field(default_factory=dict)
    indexes: list = field(default_factory=list)
    uuid: str = ""

    @property
    def is_view(self) -> bool:
        return self.type == "view"

    def document(self) -> dict:
        doc: dict[str, Any] = {}
        if self.options:
            doc["options"] = self.options
        doc["indexes"] = self.indexes
        if self.uuid:
            doc["uuid"] = self.uuid
        doc["collectionName"] = self.name
        if self.type:
            doc["type"] = self.type
        return doc

    def text(self) -> str:
        return canonical_text(self.document())


def from_listing(info: dict, indexes: list) -> CollectionMeta:
    """Metadata from a listCollections entry and the collection's listIndexes documents."""
    raw_uuid = (info.get("info") or {}).get("uuid")
    hex_uuid = ""
    if isinstance(raw_uuid, uuidlib.UUID):
        hex_uuid = raw_uuid.hex
    elif isinstance(raw_uuid, Binary) and len(raw_uuid) == 16:
        hex_uuid = bytes(raw_uuid).hex()
    kind = info.get("type", "collection")
    return CollectionMeta(name=info["name"], type=kind, options=dict(info.get("options") or {}),
                          indexes=[] if kind == "view" else [dict(ix) for ix in indexes],
                          uuid=hex_uuid)


def parse(text: str, where: str, default_name: str) -> CollectionMeta:
    """Metadata read from a file (or an archive's prelude); errors say where and what."""
    doc = parse_document(text, f"metadata in {where}")
    options = doc.get("options", {})
    if not isinstance(options, dict):
        raise ToolError(f"{where}: `options` must be a document")
    indexes = doc.get("indexes", [])
    if not isinstance(indexes, list):
        raise ToolError(f"{where}: `indexes` must be an array")
    for i, ix in enumerate(indexes):
        if not isinstance(ix, dict) or not isinstance(ix.get("key"), dict) or "name" not in ix:
            raise ToolError(f"{where}: index #{i} must be a document with `key` and `name`")
    name = doc.get("collectionName", default_name)
    kind = doc.get("type", "")
    if not kind:
        kind = "view" if "viewOn" in options else "collection"
    uuid_value = doc.get("uuid", "")
    if not isinstance(name, str) or not isinstance(kind, str) or not isinstance(uuid_value, str):
        raise ToolError(f"{where}: `collectionName`, `type` and `uuid` must be strings")
    return CollectionMeta(name=name, type=kind, options=options, indexes=indexes,
                          uuid=uuid_value)
