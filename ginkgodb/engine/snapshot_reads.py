"""Reads at a point in time outside transactions: readConcern `snapshot`, `atClusterTime`.

mongod serves them from its storage engine's history (minSnapshotHistoryWindowInSeconds, 300 s).
LMDB keeps no history, so a point in time exists only while a snapshot of it is held open:
a snapshot read without `atClusterTime` takes one of now and keeps it, under the cluster time it
holds (the newest oplog entry inside it); later reads at that time (a snapshot session's next
reads, their getMores) read the very same snapshot. A kept snapshot goes 300 s after its last
use. A time no kept snapshot holds answers 239 SnapshotTooOld, unless nothing was written since
(then it is now).
"""
from __future__ import annotations

import threading
import time
from typing import Any, Optional

from bson.timestamp import Timestamp

from ..errors import CommandError, ErrorCode
from .oplog import entry_ts, last_entry
from .transactions import Transaction, TransactionView
from .transactions import abort as abort_transaction

#: mongod's minSnapshotHistoryWindowInSeconds
HISTORY_SECONDS = 300.0


class _Kept:
    __slots__ = ("txn", "used")

    def __init__(self, txn: Transaction) -> None:
        self.txn = txn
        self.used = time.monotonic()


class SnapshotView(TransactionView):
    """A read-only view of one kept snapshot: a write through it would be silently lost, so it
    is refused."""

    def write(self, reclaims: bool = False) -> Any:
        raise CommandError(ErrorCode.InvalidOptions,
                           "Cannot write with readConcern 'snapshot' outside a transaction")


class SnapshotReads:
    """The snapshots an engine keeps for point-in-time reads."""

    def __init__(self, engine: Any) -> None:
        self._engine = engine
        self._kept: dict[Timestamp, _Kept] = {}
        self._lock = threading.Lock()

    def now(self) -> tuple[Timestamp, SnapshotView]:
        """A snapshot of now, and the cluster time it holds."""
        txn = Transaction(self._engine, {})
        at = self._time_of(txn)
        with self._lock:
            self._reap_locked()
            kept = self._kept.get(at)
            if kept is not None:  # nothing was written since that one was taken: share it
                abort_transaction(self._engine, txn)
                kept.used = time.monotonic()
                return at, SnapshotView(self._engine, kept.txn)
            self._kept[at] = _Kept(txn)
        return at, SnapshotView(self._engine, txn)

    def at(self, at: Timestamp) -> SnapshotView:
        """The kept snapshot of cluster time `at`."""
        with self._lock:
            self._reap_locked()
            kept = self._kept.get(at)
            if kept is not None:
                kept.used = time.monotonic()
                return SnapshotView(self._engine, kept.txn)
        latest, view = self.now()
        if latest == at:
            return view
        if at > latest:
            raise CommandError(ErrorCode.InvalidOptions,
                               "readConcern atClusterTime value must not be greater than the current "
                               f"clusterTime. Requested clusterTime: {_show(at)}; current clusterTime: "
                               f"{_show(latest)}")
        raise CommandError(ErrorCode.SnapshotTooOld,
                           f"Read timestamp {_show(at)} is older than the oldest available timestamp.")

    def close(self) -> None:
        with self._lock:
            kept, self._kept = list(self._kept.values()), {}
        for k in kept:
            self._drop(k.txn)

    def _time_of(self, txn: Transaction) -> Timestamp:
        coll = txn.base_catalog.collection("local", "oplog.rs")
        entry = last_entry(txn.snapshot, coll) if coll is not None else None
        if entry is not None:
            return entry_ts(entry[1])
        return self._engine.clock.last()  # no oplog: the clock's present

    def _reap_locked(self) -> None:
        horizon = time.monotonic() - HISTORY_SECONDS
        for at in [at for at, k in self._kept.items() if k.used < horizon]:
            self._drop(self._kept.pop(at).txn)

    def _drop(self, txn: Transaction) -> None:
        self._engine.cursors.kill_owned_by(txn.id)
        abort_transaction(self._engine, txn)


def _show(at: Optional[Timestamp]) -> str:
    return "none" if at is None else f"Timestamp({at.time}, {at.inc})"
