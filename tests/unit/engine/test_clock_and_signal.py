"""The logical clock's timestamps (made without bson's validating constructor) and the commit
signal that wakes awaitData cursors (taken without its condition when nobody waits)."""
from __future__ import annotations

import threading
import time

import bson
from bson.timestamp import Timestamp

from ginkgodb.engine.clock import LogicalClock, make_timestamp
from ginkgodb.engine.commit_signal import CommitSignal


def test_made_timestamps_are_bsons_own():
    for secs, inc in ((0, 0), (1, 1), (1_700_000_000, 7), (2**32 - 1, 2**32 - 1)):
        made, built = make_timestamp(secs, inc), Timestamp(secs, inc)
        assert type(made) is Timestamp
        assert (made.time, made.inc) == (secs, inc)
        assert made == built and hash(made) == hash(built) and repr(made) == repr(built)
        assert bson.encode({"ts": made}) == bson.encode({"ts": built})
        assert bson.decode(bson.encode({"ts": made}))["ts"] == built


def test_ticks_increase_strictly():
    clock = LogicalClock()
    ticks = [clock.tick() for _ in range(1000)]
    assert all(a < b for a, b in zip(ticks, ticks[1:]))
    assert clock.last() == ticks[-1]


def test_a_commit_wakes_a_waiter_and_moves_the_generation():
    signal = CommitSignal()
    seen = signal.generation
    woke: list[bool] = []
    waiter = threading.Thread(target=lambda: woke.append(signal.wait(seen, 10)))
    waiter.start()
    while not signal._waiters:          # the waiter counted itself: a commit must wake it
        time.sleep(0.001)
    signal.committed()
    waiter.join(5)
    assert woke == [True] and signal.generation != seen


def test_a_commit_without_waiters_moves_the_generation_only():
    signal = CommitSignal()
    seen = signal.generation
    signal.committed()
    assert signal.generation != seen
    assert signal.wait(seen, 0) is True                 # already moved: no wait
    assert signal.wait(signal.generation, 0.01) is False


def test_notify_and_commits_never_undo_each_other():
    """Commits (under the engine's lock) and wake-ups without one (another thread) keep their
    own counters: the generation moves at every one of them."""
    signal = CommitSignal()
    stop = threading.Event()

    def wake() -> None:
        while not stop.is_set():
            signal.notify()

    other = threading.Thread(target=wake)
    other.start()
    try:
        last = signal.generation
        for _ in range(2000):
            signal.committed()
            now = signal.generation
            assert now > last
            last = now
    finally:
        stop.set()
        other.join()
    assert signal._local == 2000
