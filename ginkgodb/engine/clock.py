"""The logical clock: one BSON Timestamp per committed write batch, strictly increasing.

Timestamps are (seconds, increment) as mongod's cluster time: the seconds follow the wall clock
and never go back; the increment orders commits within a second. The oplog stamps its entries
with them and replies report them as `operationTime`; `seed` moves the clock past a timestamp
found in storage (the newest oplog entry) when a data directory is opened.
"""
from __future__ import annotations

import threading
import time

from bson.timestamp import Timestamp

_new_timestamp = Timestamp.__new__


def make_timestamp(secs: int, inc: int) -> Timestamp:
    """Timestamp(secs, inc) for values the clock already keeps in range: bson's constructor
    validates its arguments in Python, which cost as much as the rest of a tick."""
    ts = _new_timestamp(Timestamp)
    ts._Timestamp__time = secs   # type: ignore[attr-defined]  # the slots bson's constructor fills
    ts._Timestamp__inc = inc     # type: ignore[attr-defined]
    return ts


class LogicalClock:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._secs = 0
        self._inc = 0

    def tick(self) -> Timestamp:
        """The next timestamp (for a commit)."""
        with self._lock:
            now = int(time.time())
            if now > self._secs:
                self._secs, self._inc = now, 1
            else:
                self._inc += 1
                if self._inc >= 1 << 32:  # more than 4 billion commits in a second: borrow one
                    self._secs, self._inc = self._secs + 1, 1
            return make_timestamp(self._secs, self._inc)

    def last(self) -> Timestamp:
        """The newest timestamp handed out."""
        with self._lock:
            return Timestamp(self._secs, self._inc)

    def reserve(self, n: int) -> tuple[int, int]:
        """`n` consecutive timestamps in one second: (seconds, first increment); the batch's
        entries take increments first .. first + n - 1 (no Timestamp objects made)."""
        with self._lock:
            now = int(time.time())
            if now > self._secs:
                self._secs, self._inc = now, 0
            if self._inc + n >= 1 << 32:          # they would not fit in this second: borrow one
                self._secs, self._inc = self._secs + 1, 0
            first = self._inc + 1
            self._inc += n
            return self._secs, first

    def ticks(self, n: int) -> list[Timestamp]:
        """The next `n` timestamps, consecutive (one per oplog entry of a batch)."""
        out = []
        with self._lock:
            now = int(time.time())
            for _ in range(n):
                if now > self._secs:
                    self._secs, self._inc = now, 1
                else:
                    self._inc += 1
                    if self._inc >= 1 << 32:
                        self._secs, self._inc = self._secs + 1, 1
                out.append(Timestamp(self._secs, self._inc))
        return out

    def now(self) -> Timestamp:
        """The latest timestamp handed out (the current cluster time), without advancing it."""
        with self._lock:
            if self._secs == 0:
                return Timestamp(int(time.time()), 0)
            return Timestamp(self._secs, self._inc)

    def seed(self, ts: Timestamp) -> None:
        """Never hand out a timestamp at or before `ts` again."""
        with self._lock:
            if (ts.time, ts.inc) > (self._secs, self._inc):
                self._secs, self._inc = ts.time, ts.inc
