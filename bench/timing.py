"""Bounded measurement: rates over as many operations as fit in a time budget.

Slow peers (no indexes, pure-Python scans) would take hours at full size, so every workload
measures a rate over a bounded number of operations instead of running to completion, and one
operation that overruns a hard deadline is interrupted (SIGALRM) and reported as a timeout.
"""
from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass


class HardTimeout(BaseException):
    """Raised inside the measured code when it overruns; BaseException so that a library's
    `except Exception` cannot swallow it."""


@dataclass
class Sample:
    ops: int
    units: float
    seconds: float

    @property
    def rate(self) -> float:
        return self.units / self.seconds if self.seconds > 0 else float("inf")


def measure(op: Callable[[int], float], max_ops: int, budget: float) -> Sample:
    """Call `op(j)` for j = 0, 1, ... until `max_ops` calls or `budget` seconds have passed.

    `op` returns the units it processed (1 for one operation, the document count for a bulk
    one). At least one call is always made.
    """
    clock = time.perf_counter
    units = 0.0
    ops = 0
    start = clock()
    while ops < max_ops:
        units += op(ops)
        ops += 1
        if clock() - start >= budget:
            break
    return Sample(ops, units, clock() - start)


def timed(fn: Callable[[], float]) -> Sample:
    """One operation of `fn`, which returns the units it processed."""
    start = time.perf_counter()
    units = fn()
    return Sample(1, units, time.perf_counter() - start)


@contextmanager
def hard_deadline(seconds: float) -> Iterator[None]:
    """Interrupt the block with HardTimeout after `seconds` (main thread only)."""
    def expire(signum, frame):  # noqa: ARG001 - signal handler signature
        raise HardTimeout(f"exceeded {seconds:.0f} s")

    previous = signal.signal(signal.SIGALRM, expire)
    outer_delay, outer_interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    start = time.monotonic()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer_delay:  # an enclosing timer (e.g. pytest-timeout) keeps its deadline
            remaining = max(outer_delay - (time.monotonic() - start), 1e-3)
            signal.setitimer(signal.ITIMER_REAL, remaining, outer_interval)
