"""Time bounds for tests on a shared machine.

A test that asserts how long something takes states the bound an idle machine keeps; on a busy
one (other suites, parallel workers) every thread gets a share of the cores, so the bound is
stretched by how oversubscribed the machine is right now: the 1-minute load average per core.
What is checked stays the same (a limit is enforced, a request does not wait behind another);
only the wall-clock allowance grows with the load.
"""
from __future__ import annotations

import os


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
