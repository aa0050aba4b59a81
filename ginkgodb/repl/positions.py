"""Where each member's oplog stands, as the primary knows it, and the majority commit point.

Secondaries report their last applied optime (replSetUpdatePosition); the primary's own is its
newest oplog entry. The commit point is the newest optime that a majority of the voting members
have applied: with positions sorted newest first, the majority-th one. `w: majority` and `w: N`
writes wait here until their optime is covered (`wait_for`).
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Optional

from bson.timestamp import Timestamp

ZERO = Timestamp(0, 0)


def majority_of(voters: int) -> int:
    return voters // 2 + 1


def commit_point(applied: list[Timestamp], majority: int) -> Timestamp:
    """The newest optime at least `majority` of the `applied` positions have reached."""
    if majority <= 0 or len(applied) < majority:
        return ZERO
    return sorted(applied, reverse=True)[majority - 1]


class Positions:
    """Members' applied optimes (member id -> ts), with waiters for write concerns."""

    def __init__(self) -> None:
        self._applied: dict[int, Timestamp] = {}
        self._wall: dict[int, float] = {}
        self._cond = threading.Condition()
        #: the voting member ids of the current configuration, and the data-bearing ones
        self.voters: set[int] = set()
        self.members: set[int] = set()

    def configure(self, voters: set[int], members: set[int]) -> None:
        with self._cond:
            self.voters, self.members = set(voters), set(members)
            self._cond.notify_all()

    def update(self, member_id: int, ts: Timestamp) -> None:
        with self._cond:
            if ts > self._applied.get(member_id, ZERO):
                self._applied[member_id] = ts
                self._wall[member_id] = time.time()
                self._cond.notify_all()

    def reset(self) -> None:
        """A new term: positions are heard again from scratch (this member's own stays)."""
        with self._cond:
            self._applied.clear()
            self._cond.notify_all()

    def applied(self, member_id: int) -> Optional[Timestamp]:
        with self._cond:
            return self._applied.get(member_id)

    def snapshot(self) -> dict[int, Timestamp]:
        with self._cond:
            return dict(self._applied)

    def majority_point(self) -> Timestamp:
        with self._cond:
            return self._majority_point()

    def _majority_point(self) -> Timestamp:
        voters = self.voters or set(self._applied)
        return commit_point([self._applied.get(m, ZERO) for m in voters], majority_of(len(voters)))

    def _count_at(self, ts: Timestamp) -> int:
        return sum(1 for m in (self.members or set(self._applied)) if self._applied.get(m, ZERO) >= ts)

    def wait_for(self, ts: Timestamp, w: object, timeout: Optional[float],
                 still_primary: Callable[[], bool]) -> str:
        """Wait until `ts` is replicated as `w` asks ("majority" or a member count). Returns
        "ok", "timeout", or "stepped_down"."""
        deadline = None if timeout is None else time.monotonic() + timeout

        def done() -> bool:
            if w == "majority":
                return self._majority_point() >= ts
            return self._count_at(ts) >= int(w)  # type: ignore[call-overload]

        with self._cond:
            while not done():
                if not still_primary():
                    return "stepped_down"
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return "timeout"
                self._cond.wait(0.1 if left is None else min(left, 0.1))
        return "ok"
