"""find_raw_batches / aggregate_raw_batches: each iteration step yields one whole batch as the
bytes of its BSON documents back to back (what `bson.decode_all` reads), with no decoding.
"""
from __future__ import annotations

import collections
from collections.abc import Mapping
from typing import Any

import bson
from bson.raw_bson import RawBSONDocument
from pymongo.errors import InvalidOperation

from .command_cursor import CommandCursor
from .cursor import Cursor


def batch_bytes(documents: list) -> list:
    """A batch of documents as a one-element list of their concatenated BSON (empty if none)."""
    if not documents:
        return []
    return [b"".join(doc.raw if isinstance(doc, RawBSONDocument) else bson.encode(doc)
                     for doc in documents)]


class RawBatchCursor(Cursor):
    """A find cursor yielding raw batches (pymongo.cursor.RawBatchCursor)."""

    def _take_reply(self, reply: Any, first: bool) -> None:
        if not self._opts.explain:
            cursor = dict(reply["cursor"])
            key = "firstBatch" if first else "nextBatch"
            cursor[key] = batch_bytes(cursor[key])
            reply = dict(reply, cursor=cursor)
        super()._take_reply(reply, first)

    def _decode(self, raw: Any) -> Any:
        return raw

    def _decode_batch(self, documents: list) -> list:
        return list(documents)

    def explain(self) -> Any:
        clone = Cursor(self._collection, session=self._session)
        clone._opts = self._clone(deepcopy=True)._opts
        return clone.explain()

    def __getitem__(self, index: Any) -> Any:
        raise InvalidOperation("Cannot call __getitem__ on RawBatchCursor")


class RawBatchCommandCursor(CommandCursor):
    """An aggregate cursor yielding raw batches (pymongo's RawBatchCommandCursor)."""

    def __init__(self, collection: Any, cursor_info: Mapping[str, Any], *args: Any,
                 **kwargs: Any) -> None:
        cursor_info = dict(cursor_info, firstBatch=batch_bytes(cursor_info["firstBatch"]))
        super().__init__(collection, cursor_info, *args, **kwargs)

    def _refresh(self) -> int:
        count = super()._refresh()
        if count:
            self._data = collections.deque(batch_bytes(list(self._data)))
        return len(self._data)

    def _decode(self, raw: Any) -> Any:
        return raw

    def _decode_batch(self, documents: list) -> list:
        return list(documents)

    def __getitem__(self, index: Any) -> Any:
        raise InvalidOperation("Cannot call __getitem__ on RawBatchCommandCursor")
