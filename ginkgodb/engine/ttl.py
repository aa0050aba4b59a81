"""TTL indexes: a background monitor deletes documents whose indexed date is older than
`expireAfterSeconds`, as mongod's TTL monitor does (every ttlMonitorSleepSecs, 60 by default).

A document whose indexed field is an array expires when its earliest date does; documents
without a date there never expire.

When several processes share a data directory each has a monitor, but only the holder of the
directory's TTL lease (`TTL_LEASE`, storage's `lease`) runs passes; the others try to take the
lease at every period, so one of them takes over when its holder exits.
"""
from __future__ import annotations

import datetime
import logging
import threading
import time
import weakref
from typing import Optional

import bson

from ..bsonutil import keycodec
from ..bsonutil.types import BRACKET_DATE
from ..storage.kv import prefix_end
from . import record_format
from .records import delete_record

log = logging.getLogger("ginkgodb.ttl")
DEFAULT_INTERVAL = 60.0
#: the name of the lease (a lock file in the data directory) whose holder runs the passes
TTL_LEASE = "ttl-monitor.lock"


def _ttl_indexes(engine):
    for meta in engine.catalog.all():
        for ix in meta.indexes:
            if "expireAfterSeconds" in ix.options and len(ix.key) == 1:
                yield meta, ix


def expire_once(engine, now: Optional[datetime.datetime] = None) -> int:
    """One pass over every TTL index; returns how many documents were deleted."""
    now = now or datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    deleted = 0
    for meta, ix in list(_ttl_indexes(engine)):
        cutoff = now - datetime.timedelta(seconds=float(ix.options["expireAfterSeconds"]))
        with engine.write(reclaims=True) as batch:
            txn = batch.txn
            state = batch.collection(meta.db, meta.name)
            if state is None or state.index(ix.name) is None:
                continue
            runtime = state.index(ix.name)
            direction = runtime.directions[0]
            lo: bytes = keycodec.bracket_min(BRACKET_DATE)
            hi: Optional[bytes] = keycodec.encode_value(cutoff)
            if direction < 0:
                assert hi is not None
                lo, hi = keycodec.invert(hi), prefix_end(keycodec.invert(lo))
            end = runtime.prefix + hi if hi is not None else prefix_end(runtime.prefix)
            rids = {runtime.rid_of_entry(k) for k, _ in txn.scan(runtime.prefix + lo, end)}
            for rid in sorted(rids):
                value = txn.get(state.record_key(rid))
                if value is not None:
                    raw = record_format.document(value)
                    delete_record(batch, state, rid, bson.decode(raw), raw)
                    deleted += 1
    from .timeseries import expire as expire_buckets
    return deleted + expire_buckets(engine, now)


class _Period:
    """The process-wide pause between passes (mongod's ttlMonitorSleepSecs); monitors that follow
    it wake when it changes, so a new period applies from their last pass."""

    def __init__(self) -> None:
        self.seconds = DEFAULT_INTERVAL
        self.monitors: weakref.WeakSet[TTLMonitor] = weakref.WeakSet()
        self.lock = threading.Lock()


_PERIOD = _Period()


def set_monitor_sleep(seconds: float) -> None:
    """Set ttlMonitorSleepSecs: every monitor that follows it uses the new period at once."""
    with _PERIOD.lock:
        _PERIOD.seconds = float(seconds)
        monitors = list(_PERIOD.monitors)
    for monitor in monitors:
        monitor.wake()


def monitor_sleep() -> float:
    return _PERIOD.seconds


class TTLMonitor:
    """Runs `expire_once` on a daemon thread until stopped: every `interval` seconds, or, when
    `interval` is None, every ttlMonitorSleepSecs (`set_monitor_sleep`)."""

    def __init__(self, engine, interval: Optional[float] = None) -> None:
        self._engine = engine
        self._interval = interval
        self._stop = threading.Event()
        self._wake = threading.Event()
        #: this monitor holds the TTL lease: the one among the processes sharing the data
        #: directory that runs passes
        self.active = False
        #: passes run (mongod's serverStatus metrics.ttl.passes)
        self.passes = 0
        if interval is None:
            with _PERIOD.lock:
                _PERIOD.monitors.add(self)
        self._thread = threading.Thread(target=self._run, name="ginkgodb-ttl", daemon=True)
        self._thread.start()

    @property
    def period(self) -> float:
        return self._interval if self._interval is not None else _PERIOD.seconds

    def wake(self) -> None:
        self._wake.set()

    def _take_lease(self) -> bool:
        if not self.active:
            try:
                self.active = self._engine.kv.lease(TTL_LEASE)
            except Exception:  # e.g. the directory became unwritable: try again next period
                log.exception("TTL lease failed")
        return self.active

    def _run(self) -> None:
        last = time.monotonic()
        self._take_lease()   # at once, so which process runs the passes is known from the start
        while not self._stop.is_set():
            remaining = last + self.period - time.monotonic()
            if remaining > 0:
                self._wake.wait(remaining)
                self._wake.clear()
                continue
            try:
                if self._take_lease():
                    expire_once(self._engine)
                    self.passes += 1
            except Exception:  # a failed pass is retried at the next interval
                log.exception("TTL pass failed")
            last = time.monotonic()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join()
