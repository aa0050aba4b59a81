"""Work of the tools spread over processes, results taken in input order.

Restore, import and export each have one step that costs as much as the writing (or reading)
around it and needs nothing but its input: checking BSON for an insert, parsing JSON, encoding
JSON. On a machine with more than one core that step runs in worker processes while the tool's
own process reads and writes; `ordered_map` hands the items out and gives the answers back in
the order of the input, with a bounded number in flight (memory stays a few batches). A small
input, or a single core, runs the step inline: the answers are the same either way.
"""
from __future__ import annotations

import gc
import multiprocessing
import os
import signal
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Optional, TypeVar

from .log import ToolError

T = TypeVar("T")
R = TypeVar("R")

#: below this many documents a worker process costs more to start than it saves
MIN_DOCUMENTS = 20_000


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:      # not on Linux
        return os.cpu_count() or 1


def workers_for(documents: Optional[int], wanted: Optional[int] = 1) -> int:
    """How many worker processes a step over `documents` documents gets (0: inline), at most
    `wanted` (None: one per core). Unknown counts (None) get workers: inputs whose size is not
    known ahead are read from files."""
    if (cores() < 2 or "fork" not in multiprocessing.get_all_start_methods()
            or (documents is not None and documents < MIN_DOCUMENTS)):
        return 0
    return max(1, cores() if wanted is None else min(wanted, cores()))


def _context() -> Any:
    # fork: no fresh interpreter to start, nothing imported again, and no main module run
    # again (spawn runs the caller's script once more). A worker runs only a pure function of
    # bson/orjson/bsonjs over its input and leaves through os._exit: it touches none of the
    # parent's threads' locks, open data directory or exit handlers.
    return multiprocessing.get_context("fork")


def _worker_start() -> None:
    # Ctrl-C reaches the whole process group: the tool's own process stops the workers
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # the objects inherited from the tool's process (the whole engine, a client) are never
    # garbage here: the collector need not walk them on every pass
    gc.freeze()


class Workers:
    """A pool of `n` worker processes (none when `n` is 0), for `ordered_map`."""

    def __init__(self, n: int) -> None:
        self.n = n
        self._pool: Optional[ProcessPoolExecutor] = None
        if n > 0:
            self._pool = ProcessPoolExecutor(max_workers=n, mp_context=_context(),
                                             initializer=_worker_start)

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def ordered_map(self, func: Callable[[T], R], items: Iterable[T], ahead: int = 2) -> Iterator[R]:
        """func(item) for each item, in order; up to `ahead` items per worker in flight."""
        if self._pool is None:
            for item in items:
                yield func(item)
            return
        pending: deque[Future] = deque()
        limit = max(1, ahead * self.n)
        try:
            for item in items:
                pending.append(self._pool.submit(func, item))
                if len(pending) >= limit:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        except BrokenProcessPool:
            raise ToolError("a worker process stopped unexpectedly (killed, or out of "
                            "memory?)") from None
        finally:
            for future in pending:
                future.cancel()
