"""Write conflicts between transactions and other writers: first writer wins.

What a writer changes is *claimed* by key (a document's record key; an added unique-index key).
While any transaction is open the table keeps (a) the keys open transactions hold and (b) the
commit sequence number at which each key was last committed. A transaction's claim fails with
112 WriteConflict when another open transaction holds the key or when the key was committed after
its snapshot; an ordinary writer that meets a key an open transaction holds waits for that
transaction to end (`WaitForTransaction`) instead of failing. With no transaction open nothing
is recorded (docs/design/transactions.md).
"""
from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from typing import Any, Optional

from ..errors import CommandError, ErrorCode
from .no_wait import WouldBlock, waits_refused

TRANSIENT = ("TransientTransactionError",)


def write_conflict(message: str = "Write conflict during plan execution and yielding is disabled. :: Please "
                                  "retry your operation or multi-document transaction.") -> CommandError:
    return CommandError(ErrorCode.WriteConflict, message, labels=TRANSIENT)


class WaitForTransaction(Exception):
    """An ordinary write met a key an open transaction holds: roll back, wait, run again."""

    def __init__(self, owner: int) -> None:
        super().__init__(f"key held by transaction {owner}")
        self.owner = owner


class ConflictTable:
    def __init__(self) -> None:
        self._lock = threading.Condition(threading.Lock())
        self._holders: dict[bytes, int] = {}       # key -> open transaction id
        self._held: dict[int, set[bytes]] = {}     # open transaction id -> its keys
        self._snapshots: dict[int, int] = {}       # open transaction id -> its snapshot sequence
        self._committed: dict[bytes, int] = {}     # key -> commit sequence of its last commit
        self.seq = 0                               # commit sequence of the latest commit
        self._next_txn = 1

    @property
    def active(self) -> bool:
        """Is any transaction open? (the only test ordinary writes pay when none is)"""
        return bool(self._snapshots)

    # -- transactions ------------------------------------------------------------------------
    def open(self) -> tuple[int, int]:
        """(a new transaction id, its snapshot sequence); call just before taking the snapshot."""
        with self._lock:
            txn_id = self._next_txn
            self._next_txn += 1
            self._snapshots[txn_id] = self.seq
            self._held[txn_id] = set()
            return txn_id, self.seq

    def claim_for_transaction(self, txn_id: int, keys: Iterable[bytes]) -> None:
        with self._lock:
            snapshot = self._snapshots.get(txn_id)
            if snapshot is None:
                raise CommandError(ErrorCode.NoSuchTransaction, "the transaction is no longer open",
                                   labels=TRANSIENT)
            held = self._held[txn_id]
            for key in keys:
                if key in held:
                    continue
                owner = self._holders.get(key)
                if owner is not None and owner != txn_id:
                    raise write_conflict()
                if self._committed.get(key, -1) > snapshot:
                    raise write_conflict()
                self._holders[key] = txn_id
                held.add(key)

    def close(self, txn_id: int, committed_at: Optional[int] = None) -> None:
        """The transaction ended (committed at `committed_at`, or aborted): release its keys."""
        with self._lock:
            keys = self._held.pop(txn_id, set())
            self._snapshots.pop(txn_id, None)
            for key in keys:
                if self._holders.get(key) == txn_id:
                    del self._holders[key]
                if committed_at is not None and self._snapshots:
                    self._committed[key] = committed_at
            self._collect()
            self._lock.notify_all()

    # -- ordinary writers ----------------------------------------------------------------------
    def check_ordinary(self, keys: Iterable[bytes]) -> None:
        """Raise WaitForTransaction when an open transaction holds one of `keys`."""
        with self._lock:
            for key in keys:
                owner = self._holders.get(key)
                if owner is not None:
                    raise WaitForTransaction(owner)

    def committed(self, keys: Iterable[bytes]) -> None:
        """An ordinary batch committed (storage has it): its keys' new versions, kept only while
        transactions that could conflict with them are open. With none open it takes no lock
        and moves no sequence: a transaction that opens meanwhile takes its snapshot after this
        commit, so it sees the commit and cannot conflict with it."""
        if not self._snapshots:
            return
        with self._lock:
            self.seq += 1
            if self._snapshots:
                seq = self.seq
                for key in keys:
                    self._committed[key] = seq

    def next_seq(self) -> int:
        """A commit's sequence number (a transaction's own commit)."""
        with self._lock:
            self.seq += 1
            return self.seq

    def wait_for(self, txn_id: int, deadline: Optional[float]) -> bool:
        """Wait until transaction `txn_id` ends; False when the deadline passed first. A command
        on the server's event loop must not wait: WouldBlock (it runs again in a worker)."""
        if waits_refused() and txn_id in self._snapshots:
            raise WouldBlock(f"the write waits for transaction {txn_id}")
        with self._lock:
            while txn_id in self._snapshots:
                timeout = None if deadline is None else deadline - time.monotonic()
                if timeout is not None and timeout <= 0:
                    return False
                self._lock.wait(timeout if timeout is not None else 1.0)
            return True

    def _collect(self) -> None:
        """Forget commits no open transaction's snapshot precedes."""
        if not self._snapshots:
            self._committed.clear()
            return
        oldest = min(self._snapshots.values())
        if len(self._committed) > 4096:
            self._committed = {k: s for k, s in self._committed.items() if s > oldest}

    def holder(self, key: bytes) -> Optional[int]:
        return self._holders.get(key)

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {"open": len(self._snapshots), "held": len(self._holders), "remembered": len(self._committed)}
