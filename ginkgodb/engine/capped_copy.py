"""cloneCollectionAsCapped and convertToCapped: a collection's documents copied, in natural
order, into a new capped collection (which evicts its oldest documents as it fills), in one write
batch. convertToCapped then drops the source and gives the copy its name, keeping only the `_id`
index, as mongod does."""
from __future__ import annotations

import bson

from ..errors import CommandError, ErrorCode
from ..storage.kv import prefix_end
from . import ddl, record_format
from .batch import WriteBatch
from .records import insert_record

_TEMP_PREFIX = "tmp.convertToCapped."


def clone_as_capped(batch: WriteBatch, db: str, source: str, target: str, size: float,
                    command: str = "cloneCollectionAsCapped") -> None:
    meta = batch.catalog.get(db, source)
    if meta is not None and meta.is_view:
        raise CommandError(ErrorCode.CommandNotSupportedOnView, f"{command} not supported for views: {db}.{source}")
    if meta is None:
        raise CommandError(ErrorCode.NamespaceNotFound, f"source collection {db}.{source} does not exist")
    if "clusteredIndex" in meta.options:
        raise CommandError(ErrorCode.NotImplemented, f"{command} of a clustered collection is not supported by "
                                                     "ginkgodb")
    if batch.catalog.get(db, target) is not None:
        raise CommandError(ErrorCode.NamespaceExists, f"cloneCollectionAsCapped failed - destination collection "
                                                      f"{db}.{target} already exists. source: {db}.{source}")
    ddl.create_collection(batch, db, target, {"capped": True, "size": size})
    src = batch.collection(db, source)
    assert src is not None
    for _, value in list(batch.txn.scan(src.record_prefix, prefix_end(src.record_prefix))):
        raw = record_format.document(value)
        dst = batch.collection(db, target)
        assert dst is not None
        insert_record(batch, dst, bson.decode(raw), raw)


def convert_to_capped(batch: WriteBatch, db: str, name: str, size: float) -> None:
    temp = _TEMP_PREFIX + name
    clone_as_capped(batch, db, name, temp, size, "convertToCapped")
    source = batch.catalog.get(db, name)
    assert source is not None
    ddl.drop_collection(batch, source)
    copy = batch.catalog.get(db, temp)
    assert copy is not None
    ddl.rename_collection(batch, copy, db, name, False)
