"""Server-side cursors: batches, getMore, killCursors, idle timeout.

A cursor wraps a generator of `RawBSONDocument`s and the Reader it pulls through; each batch runs
inside one short read transaction.
"""
from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Iterator
from typing import Any, Optional

from bson.raw_bson import RawBSONDocument

from ..errors import CommandError, ErrorCode
from ..limits import MAX_BSON_OBJECT_SIZE

DEFAULT_FIRST_BATCH = 101
MAX_BATCH_BYTES = MAX_BSON_OBJECT_SIZE  # a batch fits in one reply document, as in mongod
#: each document's array-element overhead in the reply (type byte, index digits, NUL), counted
#: as mongod's batch limit counts it: without it, 16 MiB of small documents overflow the reply
PER_DOCUMENT_OVERHEAD = 8
IDLE_TIMEOUT = 600.0  # seconds, mongod's cursorTimeoutMillis default


class PlanStats:
    """The plan a cursor reads through, for the profiler: what its stages examined so far and
    its planSummary, read only when asked (the stages keep their counters anyway)."""

    __slots__ = ("built",)

    def __init__(self, built: Any = None) -> None:
        self.built = built            # a plan_builder.BuiltPlan, or None (no plan: a view, a source stage)

    @property
    def keys_examined(self) -> int:
        return self.built.keys_examined if self.built is not None else 0

    @property
    def docs_examined(self) -> int:
        return self.built.docs_examined if self.built is not None else 0

    @property
    def plan_summary(self) -> Optional[str]:
        return self.built.plan_summary if self.built is not None else None

    def examined(self) -> tuple[int, int]:
        """(keys_examined, docs_examined)."""
        return self.built.examined() if self.built is not None else (0, 0)


class ServerCursor:
    def __init__(self, ns: str, docs: Iterator[RawBSONDocument], reader: Any, *,
                 limit: int = 0, no_timeout: bool = False, on_close=None,
                 stats: Any = None) -> None:
        self.id = 0
        self.ns = ns
        self.stats = stats            # its plan's counters: a BuiltPlan, a PlanStats, or None (no plan)
        self.origin: Any = None       # the command that opened it (a getMore's profile entry shows it)
        self._docs = docs
        self._reader = reader
        self.remaining = limit if limit > 0 else None
        self.no_timeout = no_timeout
        self.last_used = time.monotonic()
        self.exhausted = False
        self.lock = threading.Lock()
        self.on_close = on_close
        self.n_returned = 0
        self._pending: Optional[RawBSONDocument] = None  # read but held over: it would overflow a batch

    def next_batch(self, size: Optional[int], ctx: Any = None) -> list[RawBSONDocument]:
        """Up to `size` documents (None: no count limit) and at most 16 MiB, at least one if any."""
        if self.exhausted:
            return []
        if self.remaining is not None:
            size = self.remaining if size is None else min(size, self.remaining)
        batch: list[RawBSONDocument] = []
        nbytes = 0
        reader = self._reader
        if reader is not None:
            reader.open()
        try:
            docs = self._docs
            while size is None or len(batch) < size:
                doc, self._pending = self._pending, None
                if doc is None:
                    doc = next(docs, None)   # a default: the end raises no StopIteration
                    if doc is None:
                        self.exhausted = True
                        break
                n = len(doc.raw) + PER_DOCUMENT_OVERHEAD
                if batch and nbytes + n > MAX_BATCH_BYTES:
                    self._pending = doc  # mongod stops before a batch would exceed 16 MiB
                    break
                batch.append(doc)
                nbytes += n
                if ctx is not None and not len(batch) & 255:
                    ctx.check_interrupt()
        finally:
            if reader is not None:
                reader.close()
        if self.remaining is not None:
            self.remaining -= len(batch)
            if self.remaining <= 0:
                self.exhausted = True
        self.n_returned += len(batch)
        self.last_used = time.monotonic()
        return batch

    def close(self) -> None:
        self.exhausted = True
        close = getattr(self._docs, "close", None)
        if close is not None:
            close()
        if self._reader is not None:
            self._reader.close()
        if self.on_close is not None:
            self.on_close(self)
            self.on_close = None


class TailableCursor(ServerCursor):
    """A cursor on a capped collection that stays open at the end and picks up documents
    inserted later. Every batch resumes after the last record id it saw, and first checks that
    this record is still there: if it was evicted, the cursor's position is lost (136). An
    awaitData getMore that finds nothing waits on the engine's commit signal (no polling)."""

    def __init__(self, ns: str, restart, reader: Any, *, await_data: bool, signal: Any = None,
                 **kw: Any) -> None:
        self.last_rid = 0
        self._restart = restart
        super().__init__(ns, restart(self), reader, **kw)
        self.await_data = await_data
        self._signal = signal

    def next_batch(self, size: Optional[int], ctx: Any = None, await_seconds: float = 0.0) -> list:
        deadline = time.monotonic() + await_seconds
        if self.n_returned or self.last_rid:
            self._resume()
        while True:
            seen = self._signal.generation if self._signal is not None else (0, 0)
            batch = super().next_batch(size, ctx)
            if self.exhausted and not self._closed:
                self.exhausted = False  # the end of a tailable cursor is only the end for now
                self._docs = self._restart(self)
            left = deadline - time.monotonic()
            if batch or not self.await_data or left <= 0 or self._closed:
                return batch
            if self._signal is None:
                time.sleep(min(left, 0.01))
            else:
                self._signal.wait(seen, left)

    _closed = False

    def _resume(self) -> None:
        """A new pass from the last record seen (which checks that it still exists)."""
        close = getattr(self._docs, "close", None)
        if close is not None:
            close()
        self.exhausted = False
        self._docs = self._restart(self)

    def close(self) -> None:
        self._closed = True
        super().close()


#: with `serve --workers N`, a cursor id carries its owning worker in the bits above these
WORKER_ID_SHIFT = 55
#: the most workers whose index fits the id (six bits, below the int64 sign)
MAX_WORKERS = 64


def cursor_worker(cid: int) -> int:
    """The index of the worker process that owns cursor `cid` (0 for untagged ids' low values)."""
    return (int(cid) >> WORKER_ID_SHIFT) & (MAX_WORKERS - 1)


class CursorManager:
    def __init__(self) -> None:
        self._cursors: dict[int, ServerCursor] = {}
        self._lock = threading.Lock()
        self._id_bits = 62      # random bits of a new id
        self._id_tag = 0        # the worker index above them (serve --workers)

    def name_worker(self, index: int) -> None:
        """Make every new cursor id name worker `index` in its high bits (docs/design/workers.md),
        so that a getMore arriving at another worker process can be routed to this one."""
        if not 0 <= index < MAX_WORKERS:
            raise ValueError(f"worker index {index} outside 0..{MAX_WORKERS - 1}")
        self._id_bits = WORKER_ID_SHIFT
        self._id_tag = index << WORKER_ID_SHIFT

    def register(self, cursor: ServerCursor) -> int:
        with self._lock:
            self._reap_locked()
            while True:
                cid = (secrets.randbits(self._id_bits) or 1) | self._id_tag
                if cid not in self._cursors:
                    break
            cursor.id = cid
            self._cursors[cid] = cursor
        return cid

    def kill_owned_by(self, txn_id: int) -> None:
        """A transaction ended: its cursors read a snapshot that is gone, so they go too."""
        with self._lock:
            owned = [c for c in self._cursors.values() if getattr(c, "owner_txn", None) == txn_id]
            for c in owned:
                self._cursors.pop(c.id, None)
        for c in owned:
            c.close()

    def get(self, cid: int, ns: str) -> ServerCursor:
        with self._lock:
            cursor = self._cursors.get(int(cid))
        if cursor is None:
            raise CommandError(ErrorCode.CursorNotFound, f"cursor id {int(cid)} not found")
        if cursor.ns != ns:
            raise CommandError(ErrorCode.Unauthorized,
                               f"Requested getMore on namespace '{ns}', but cursor belongs to a different "
                               f"namespace {cursor.ns}")
        return cursor

    def peek(self, cid: Any) -> Optional[ServerCursor]:
        """The open cursor `cid`, or None (no namespace check: for describing, not for reading)."""
        try:
            key = int(cid)
        except (TypeError, ValueError):
            return None
        with self._lock:
            return self._cursors.get(key)

    def kill(self, cid: int) -> bool:
        with self._lock:
            cursor = self._cursors.pop(int(cid), None)
        if cursor is None:
            return False
        cursor.close()
        return True

    def forget(self, cid: int) -> None:
        with self._lock:
            self._cursors.pop(int(cid), None)

    def open_ids(self) -> list[int]:
        with self._lock:
            return list(self._cursors)

    def _reap_locked(self) -> None:
        now = time.monotonic()
        idle = [c for c in self._cursors.values() if not c.no_timeout and now - c.last_used > IDLE_TIMEOUT]
        for c in idle:
            self._cursors.pop(c.id, None)
            c.close()

    def close_all(self) -> None:
        with self._lock:
            cursors = list(self._cursors.values())
            self._cursors.clear()
        for c in cursors:
            c.close()
