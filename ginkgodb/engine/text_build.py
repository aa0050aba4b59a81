"""Background text index builds (`textIndexBuild: "background"`, a ginkgodb extension).

createIndexes stores the index with a build state instead of indexing every document in its
batch: `{next, end, done, total}`, the record ids still to index (`next`..`end`, the records
that existed when the index was created) and the progress. From then on every write maintains
the index like a ready one (records.py writes the entries of all of a collection's indexes),
so only the records of that range wait for the builder. The builder, a daemon thread per
engine, indexes them in chunks of `CHUNK` records in key order, each chunk one write batch that
writes its entries and the advanced state together: a crash loses at most the chunk under
way, and the next start resumes from the stored state. The last chunk removes the state; the
index is then an ordinary one.

Reads stay correct during the build: a `$text` plan over a building index takes the index
lookup's record ids outside the unindexed range and scans the records of that range itself
(`TextCatchUp` in text_search.py), so it answers what a ready index would.
`$indexStats` shows `building: true` and `buildProgress: {done, total}` for such an index.

Only ordinary (numbered) record ids are built this way; a clustered collection's text index
with the option answers 238.
"""
from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from typing import Any, Optional

import bson

from ..errors import CommandError, ErrorCode
from . import record_format

log = logging.getLogger("ginkgodb.textbuild")

#: the createIndexes option (shown by listIndexes as given)
BUILD_OPTION = "textIndexBuild"
MODES = ("background", "foreground")
#: the internal option holding a building index's state (not shown by listIndexes)
STATE_OPTION = "textBuildState"
#: records indexed per write batch (small: each batch holds the engine's write lock)
CHUNK = 256

_resumed = threading.Event()
_resumed.set()


def check_option(key: dict, options: dict) -> bool:
    """createIndexes: whether the index is to be built in the background (mongod-style errors
    for a bad value)."""
    mode = options.get(BUILD_OPTION)
    if mode is None:
        return False
    if mode not in MODES:
        raise CommandError(ErrorCode.CannotCreateIndex,
                           "text index option 'textIndexBuild' must be \"background\" or \"foreground\"")
    return mode == "background"


def initial_state(numbers: Any) -> dict:
    """The state of a new background build over the records numbered below `next_rid`."""
    return {"next": 1, "end": numbers.next_rid - 1, "done": 0, "total": numbers.count}


def state_of(index_meta: Any) -> Optional[dict]:
    """A building index's state, None when it is ready."""
    return index_meta.options.get(STATE_OPTION)


def progress(index_meta: Any) -> Optional[dict]:
    """`$indexStats`' extra fields for a building index (None when ready)."""
    state = state_of(index_meta)
    if state is None:
        return None
    return {"building": True, "buildProgress": {"done": state["done"], "total": state["total"]}}


def pending_builds(catalog: Any) -> list[tuple[str, str, int]]:
    """(db, collection, index id) of every index still building."""
    return [(meta.db, meta.name, ix.id) for meta in catalog.all() for ix in meta.indexes
            if STATE_OPTION in ix.options]


def build_step(engine: Any, db: str, name: str, index_id: int, chunk: Optional[int] = None) -> bool:
    """Index the next chunk of one building index; False when there is nothing left to do
    (finished now or before, or the index or collection is gone)."""
    chunk = chunk or CHUNK
    with engine.write() as batch:
        coll = batch.collection(db, name)
        if coll is None:
            return False
        meta = next((ix for ix in coll.meta.indexes if ix.id == index_id), None)
        state = state_of(meta) if meta is not None else None
        if meta is None or state is None:
            return False
        runtime = next(ix for ix in coll.indexes if ix.meta.id == index_id)
        start, end = int(state["next"]), int(state["end"])
        entries: list[bytes] = []
        count = 0
        last = start - 1
        if start <= end:
            lo, hi = coll.record_key(start), coll.record_key(end)
            for key, value in batch.txn.scan(lo, hi + b"\x00"):
                rid = coll.rid_of_record_key(key)
                suffix = coll.rids.suffix(rid)
                keys, _ = runtime.keys(bson.decode(record_format.document(value)))
                entries.extend(k + suffix for k in keys)
                count += 1
                last = rid
                if count >= chunk:
                    break
        entries.sort()
        runtime.add_entries(batch.txn, entries)
        finished = count < chunk or last >= end
        options = dict(meta.options)
        if finished:
            del options[STATE_OPTION]
        else:
            options[STATE_OPTION] = {**state, "next": last + 1, "done": state["done"] + count}
        changed = meta.evolve(options=options)
        batch.save_meta(coll.meta.evolve(indexes=[changed if ix is meta else ix for ix in coll.meta.indexes]),
                        "textIndexBuild", index=meta.name)
        return not finished


def _wait_resumed(stop: Optional[threading.Event]) -> bool:
    """Wait while builds are paused (`builds_paused`); False when `stop` is set meanwhile."""
    while not _resumed.wait(0.05):
        if stop is not None and stop.is_set():
            return False
    return stop is None or not stop.is_set()


def build_all(engine: Any, stop: Optional[threading.Event] = None) -> int:
    """Run every pending build to its end (or until `stop`); returns the chunks written."""
    steps = 0
    while True:
        pending = pending_builds(engine.catalog)
        if not pending:
            return steps
        for db, name, index_id in pending:
            while True:
                if not _wait_resumed(stop):
                    return steps
                more = build_step(engine, db, name, index_id)
                steps += 1
                if not more:
                    break


class TextIndexBuilder:
    """The engine's builder: a batch observer that starts its daemon thread when a committed
    createIndexes asks for a background build (a command, or an applied oplog entry), or at
    start when an earlier process left builds unfinished. Without builds, no thread runs."""

    def __init__(self, engine: Any) -> None:
        self._engine = engine
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._thread: Optional[threading.Thread] = None
        if pending_builds(engine.catalog):
            self.kick()

    def kick(self) -> None:
        with self._lock:
            if self._stop.is_set():
                return
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="ginkgodb-textbuild", daemon=True)
                self._thread.start()
        self._wake.set()

    # -- BatchObserver ------------------------------------------------------------------------
    def before_commit(self, batch: Any) -> None:
        pass

    def after_commit(self, batch: Any) -> None:
        if not batch.catalog_changed:
            return
        for op in batch.ops:
            if getattr(op, "kind", None) == "createIndexes" and any(
                    spec.get(BUILD_OPTION) == "background" for spec in op.info.get("indexes", ())):
                self.kick()
                return

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait()
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                build_all(self._engine, self._stop)
            except Exception:   # e.g. a full disk: the state is intact, the next kick resumes
                log.exception("text index build failed")

    def wait(self, timeout: float = 30.0) -> bool:
        """Wait until no build is left; False after `timeout` seconds (tests, tools)."""
        import time
        deadline = time.monotonic() + timeout
        while pending_builds(self._engine.catalog):
            if time.monotonic() > deadline:
                return False
            self._wake.set()
            time.sleep(0.01)
        return True

    def stop(self) -> None:
        with self._lock:
            self._stop.set()
            thread = self._thread
        self._wake.set()
        if thread is not None:
            thread.join()


@contextlib.contextmanager
def builds_paused() -> Iterator[None]:
    """Hold every builder of this process between chunks (tests that look at a build midway)."""
    _resumed.clear()
    try:
        yield
    finally:
        _resumed.set()


def record_range(coll: Any, state: dict) -> tuple[bytes, bytes]:
    """The stored-record key range of the records a building index does not hold yet."""
    start, end = int(state["next"]), int(state["end"])
    if start > end:
        return coll.record_prefix, coll.record_prefix
    return coll.record_key(start), coll.record_key(end) + b"\x00"


__all__ = ["BUILD_OPTION", "CHUNK", "STATE_OPTION", "TextIndexBuilder", "build_all", "build_step",
           "builds_paused", "check_option", "initial_state", "pending_builds", "progress", "record_range",
           "state_of"]
