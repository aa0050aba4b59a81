"""A generation counter that committed write batches bump, and readers wait on.

awaitData cursors (change streams, tailable cursors on capped collections) remember the
generation before they look for new data, and when they found none wait until it moves (or their
await time ends): a commit wakes them at once, without a polling loop.
"""
from __future__ import annotations

import threading
import time


class CommitSignal:
    __slots__ = ("_cond", "generation", "_waiters")

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self.generation = 0
        self._waiters = 0

    def notify(self) -> None:
        """A batch committed (called by the engine after its observers)."""
        with self._cond:
            self.generation += 1
            if self._waiters:
                self._cond.notify_all()

    def wait(self, seen: int, timeout: float) -> bool:
        """Wait until the generation differs from `seen` (True) or `timeout` seconds pass."""
        deadline = time.monotonic() + timeout
        with self._cond:
            self._waiters += 1
            try:
                while self.generation == seen:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return False
                    self._cond.wait(left)
                return True
            finally:
                self._waiters -= 1

    def wake_all(self) -> None:
        """Wake every waiter without a commit (the engine is closing)."""
        with self._cond:
            self.generation += 1
            self._cond.notify_all()
