"""Time bounds for tests on a shared machine.

A test that asserts how long something takes states the bound an idle machine keeps; on a busy
one (other suites, parallel workers) every thread gets a share of the cores, so the bound is
stretched by how oversubscribed the machine is right now: the 1-minute load average per core.
What is checked stays the same (a limit is enforced, a request does not wait behind another);
only the wall-clock allowance grows with the load.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any


def slowdown() -> float:
    """How many times slower than idle the machine runs now (at least 1)."""
    try:
        load = os.getloadavg()[0]
    except OSError:   # not available on this platform
        return 1.0
    return max(1.0, load / (os.cpu_count() or 1))


def bound(seconds: float) -> float:
    """An idle machine's time bound, stretched by the current load."""
    return seconds * slowdown()


def wait_until(predicate: Callable[[], Any], timeout: float, step: float = 0.05) -> bool:
    """Poll `predicate` until it is true (True) or `timeout` seconds pass (False); a driver
    error while a cluster changes counts as not yet."""
    import pymongo.errors
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return True
        except pymongo.errors.PyMongoError:
            pass
        time.sleep(step)
    return False
