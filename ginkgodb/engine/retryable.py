"""Retryable writes: a write with a session's txnNumber runs once, whatever the retries.

The view runs the engine's write operations and stores what they answered, with the session's
txnNumber, in the same write batch (`layout.retryable_write_key`); a retry with that number is
answered from the stored result without running again, also after a restart
(docs/design/transactions.md). The record also rides on the write's last oplog entry
(`retryResult`), so a secondary that applies the write stores it too and answers a retry as the
original once it is primary (docs/design/replication.md, Retryable writes).
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Optional

import bson
from bson.int64 import Int64

from . import layout
from .batch import WriteBatch
from .catalog import Catalog
from .chunked_reader import ChunkedReader
from .operations import EngineOperations
from .writes import WriteOutcome


def outcome_document(result: Any) -> dict:
    if isinstance(result, WriteOutcome):
        return {"kind": "outcome", "n": result.n, "nModified": result.n_modified,
                "upserted": result.upserted, "errors": result.errors}
    return {"kind": "body", "body": result}


def outcome_from(doc: dict) -> Any:
    if doc.get("kind") == "outcome":
        return WriteOutcome(doc["n"], doc["nModified"], list(doc["upserted"]), list(doc["errors"]))
    return doc["body"]


class RetryableView(EngineOperations):
    """The engine's operations for one retryable write of a session."""

    def __init__(self, engine: Any, session_key: bytes, lsid: Any, txn_number: int,
                 stored: Optional[dict]) -> None:
        self._engine = engine
        self._key = session_key
        self._lsid = lsid
        self._txn_number = txn_number
        self._stored = stored  # the result of this very txnNumber, when it already ran
        self.kv = engine.kv
        self.cursors = engine.cursors
        self.conflicts = engine.conflicts
        self.clock = engine.clock

    @property
    def catalog(self) -> Catalog:
        return self._engine.catalog

    def catalog_for(self, snap: Any) -> Catalog:
        return self._engine.catalog_for(snap)

    def collection(self, db: str, name: str) -> Any:
        return self._engine.collection(db, name)

    def reader(self, txn: Any = None) -> ChunkedReader:
        return self._engine.reader(txn)

    @contextmanager
    def write(self, reclaims: bool = False) -> Iterator[WriteBatch]:
        with self._engine.write(reclaims) as batch:
            batch.txn_info = {"lsid": self._lsid, "txnNumber": Int64(self._txn_number)}
            yield batch
            if batch.result is not None:
                record = {"txnNumber": Int64(self._txn_number), "result": outcome_document(batch.result)}
                batch.txn.put(layout.retryable_write_key(self._key), bson.encode(record))
                batch.txn_info["record"] = record   # the oplog carries it to the secondaries

    def sync(self) -> None:
        self._engine.sync()

    # -- a retry answers what the first attempt answered ------------------------------------
    def insert(self, *args: Any, **kwargs: Any) -> Any:
        return self._replay() if self._stored is not None else super().insert(*args, **kwargs)

    def update(self, *args: Any, **kwargs: Any) -> Any:
        return self._replay() if self._stored is not None else super().update(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> Any:
        return self._replay() if self._stored is not None else super().delete(*args, **kwargs)

    def find_and_modify(self, *args: Any, **kwargs: Any) -> Any:
        return self._replay() if self._stored is not None else super().find_and_modify(*args, **kwargs)

    def _replay(self) -> Any:
        assert self._stored is not None
        return outcome_from(self._stored["result"])
