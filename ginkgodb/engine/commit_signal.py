"""A generation counter that committed write batches bump, and readers wait on.

awaitData cursors (change streams, tailable cursors on capped collections) remember the
generation before they look for new data, and when they found none wait until it moves (or their
await time ends): a commit of this process wakes them at once, without a polling loop.

Commits of other processes sharing the data directory cannot notify a condition variable here:
with a `stamp` (the storage's newest committed transaction id, which every process's commit
moves) the generation includes it and waiters look at it every `POLL_INTERVAL` seconds, so such
a commit wakes them within that interval (docs/design/multiprocess.md).
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Optional

#: how often a waiter looks for commits of other processes (when the data is shared)
POLL_INTERVAL = 0.05


class CommitSignal:
    __slots__ = ("_cond", "_local", "_other", "_waiters", "_stamp")

    def __init__(self, stamp: Optional[Callable[[], int]] = None) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._local = 0     # commits (moved under the engine's write lock only)
        self._other = 0     # wake-ups without a commit (moved under the condition only)
        self._waiters = 0
        self._stamp = stamp

    @property
    def generation(self) -> tuple[int, int]:
        """Moves at every commit of this process (and, when shared, of any process)."""
        return self._local + self._other, (self._stamp() if self._stamp is not None else 0)

    def committed(self) -> None:
        """A batch committed (called by the engine after its observers, under its write lock,
        so no two calls race). The condition is taken only when someone waits: a waiter counts
        itself before it compares generations, so it either sees the new one or is counted and
        woken."""
        self._local += 1
        if self._waiters:
            with self._cond:
                self._cond.notify_all()

    def notify(self) -> None:
        """Wake the waiters without a commit (the majority commit point moved)."""
        with self._cond:
            self._other += 1
            self._cond.notify_all()

    def wait(self, seen: tuple[int, int], timeout: float) -> bool:
        """Wait until the generation differs from `seen` (True) or `timeout` seconds pass."""
        deadline = time.monotonic() + timeout
        polling = self._stamp is not None
        with self._cond:
            self._waiters += 1
            try:
                while self.generation == seen:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return False
                    self._cond.wait(min(left, POLL_INTERVAL) if polling else left)
                return True
            finally:
                self._waiters -= 1

    def wake_all(self) -> None:
        """Wake every waiter without a commit (the engine is closing)."""
        with self._cond:
            self._other += 1
            self._cond.notify_all()
