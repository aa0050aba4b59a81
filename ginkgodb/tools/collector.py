"""The garbage collector held off while a tool inserts one batch.

Inserting a batch allocates a few objects per document (the documents, their keys, their
records and oplog entries) that all live until the batch commits. Every 700 allocations the
collector walks the young ones, and now and then the whole heap (the engine, the modules): a
restore spent about a sixth of its own process's CPU time there (0.37-0.40 s of 2.1-2.2 s for
100,000 documents), on objects that are freed by reference counting anyway when the batch ends.
`paused()` disables automatic collection for the length of one batch; it comes back on between
batches, so reference cycles are still collected, at most one batch late. Threads inserting
batches at the same time share the pause: it ends when the last one leaves, and a collector
that was off before stays off.
"""
from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_holders = 0
_was_enabled = False


@contextmanager
def paused() -> Iterator[None]:
    """No automatic garbage collection inside the block (explicit `gc.collect()` still runs)."""
    global _holders, _was_enabled
    with _lock:
        if _holders == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0 and _was_enabled:
                gc.enable()
