"""The primary's periodic no-op entry (mongod's NoopWriter, `writePeriodicNoops`).

An idle primary writes `{op: "n", o: {msg: "periodic noop"}}` once its newest oplog entry has
not moved for a whole interval (`periodicNoopIntervalSecs`, 10 s): the set's optimes advance
without user writes, so an idle change stream's postBatchResumeToken, hello's `lastWrite` and
the majority commit point move on as on mongod, and a secondary's staleness stays measurable.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Optional

from bson.timestamp import Timestamp

LOG = logging.getLogger("ginkgodb.repl")


class NoopWriter:
    """One thread per member; it writes only while `due()` (the member is primary, the
    parameter on) and the newest entry is the one it saw an interval ago."""

    def __init__(self, due: Callable[[], bool], newest: Callable[[], Timestamp], write: Callable[[], object]) -> None:
        self._due = due
        self._newest = newest
        self._write = write
        self._seen: Optional[Timestamp] = None
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    def start(self, interval: float) -> None:
        self._thread = threading.Thread(target=self._run, args=(interval,), daemon=True, name="noop-writer")
        self._thread.start()

    def close(self) -> None:
        self._stop.set()

    def check(self) -> bool:
        """One interval's look: True when it wrote the no-op."""
        if not self._due():
            self._seen = None
            return False
        now = self._newest()
        if now != self._seen:
            self._seen = now         # something was written in the interval: nothing to do
            return False
        self._write()
        self._seen = self._newest()
        return True

    def _run(self, interval: float) -> None:
        while not self._stop.wait(interval):
            try:
                self.check()
            except Exception as exc:    # a step-down or shutdown racing the write: the next look retries
                LOG.warning("periodic noop not written: %s", exc)
