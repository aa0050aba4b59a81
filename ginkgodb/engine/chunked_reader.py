"""Reads for one cursor, on a new snapshot per batch, so nothing is pinned between batches.

A cursor's first batch opens a snapshot and plans against the catalog of that snapshot's
generation (`Engine.read`). Each later batch opens a new snapshot; if the catalog changed in
between and the collection or an index the plan reads is gone, the cursor fails with
QueryPlanKilled as mongod's does, instead of silently returning fewer documents. Scans fetch
growing chunks and resume after the last key, so a paused generator survives its snapshot being
released and a new one opened. Inside a write batch, reads use the writer's own transaction.
"""
from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from typing import Any, Optional, Protocol

from ..errors import CommandError, ErrorCode


class SnapshotSource(Protocol):
    """What a reader needs of the engine: snapshots, and the catalog of each one's generation."""

    kv: Any

    def catalog_for(self, snap: Any) -> Any: ...


_FIRST_CHUNK = 16
_MAX_CHUNK = 1024


class ChunkedReader:
    __slots__ = ("_engine", "txn", "_fixed", "catalog", "_depends")

    def __init__(self, engine: SnapshotSource, txn: Any = None) -> None:
        self._engine = engine
        self.txn = txn
        self._fixed = txn is not None
        self.catalog: Any = None
        self._depends: Optional[tuple[int, tuple[int, ...], str]] = None

    def open(self) -> None:
        if self.txn is not None:
            if self.catalog is None:
                self.catalog = self._engine.catalog_for(self.txn)
            return
        snap = self._engine.kv.snapshot()
        try:
            catalog = self._engine.catalog_for(snap)
            if self.catalog is not None and catalog is not self.catalog:
                self._check_still_valid(catalog)
        except BaseException:
            snap.release()
            raise
        self.txn = snap
        self.catalog = catalog

    def depends_on(self, coll_id: int, index_ids: tuple[int, ...], ns: str) -> None:
        """The plan reads this collection (namespace `ns`) and these indexes: later batches
        check they remain."""
        self._depends = (coll_id, index_ids, ns)

    @property
    def plan_caches(self) -> Any:
        """The engine's plan caches (plan_cache.py), None for an engine without them."""
        return getattr(self._engine, "plan_caches", None)

    def note_use(self, index_ids: tuple[int, ...]) -> None:
        """An operation runs through these indexes: one access each for `$indexStats`."""
        usage = getattr(self._engine, "index_usage", None)
        if usage is not None and index_ids:
            usage.note(index_ids)

    def _check_still_valid(self, catalog: Any) -> None:
        if self._depends is None:
            return
        coll_id, index_ids, ns = self._depends
        if not catalog.has_ids(coll_id, index_ids):
            raise CommandError(ErrorCode.QueryPlanKilled,
                               f"PlanExecutor error during find command :: caused by :: collection {ns} "
                               "was dropped or renamed while the query was running")

    def close(self) -> None:
        if not self._fixed and self.txn is not None:
            self.txn.release()
            self.txn = None

    def __enter__(self) -> ChunkedReader:
        self.open()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def get(self, key: bytes) -> Optional[bytes]:
        if self.txn is None:
            self.open()
        return self.txn.get(key)

    def first(self, lo: bytes, hi: Optional[bytes]) -> Optional[bytes]:
        if self.txn is None:
            self.open()
        return self.txn.first(lo, hi)

    def scan(self, lo: bytes, hi: Optional[bytes], reverse: bool = False) -> Iterator[tuple[bytes, bytes]]:
        chunk = _FIRST_CHUNK
        while True:
            if self.txn is None:
                self.open()
            batch = list(islice(self.txn.scan(lo, hi, reverse), chunk))
            yield from batch
            if len(batch) < chunk:
                return
            last = batch[-1][0]
            if reverse:
                hi = last
            else:
                lo = last + b"\x00"
            chunk = min(chunk * 4, _MAX_CHUNK)
