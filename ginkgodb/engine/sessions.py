"""The session catalog: logical sessions, their transaction numbers and open transactions.

A session is keyed by its `lsid` UUID. Operations on one session run one at a time (`checkout`),
as mongod checks a session out. The catalog ends idle sessions after the logical session timeout
and aborts transactions that outlive `transactionLifetimeLimitSeconds`
(docs/design/transactions.md). Retryable writes' replies are persisted with the data they
describe (`layout.retryable_write_key`), so a retry is answered without running again, also
after a restart.
"""
from __future__ import annotations

import enum
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Optional

import bson

from . import layout
from .settings import SETTINGS


class TxnState(enum.Enum):
    NONE = "none"
    IN_PROGRESS = "inProgress"
    COMMITTED = "committed"
    ABORTED = "aborted"
    RETRYABLE = "executedRetryableWrite"


class Session:
    __slots__ = ("key", "lsid", "last_use", "txn_number", "state", "txn", "lock", "abort_reason", "user")

    def __init__(self, key: bytes, lsid: Any) -> None:
        self.key = key
        self.lsid = lsid
        self.last_use = time.time()
        self.txn_number = -1
        self.state = TxnState.NONE
        self.txn: Any = None               # the open engine.transactions.Transaction
        self.lock = threading.RLock()
        self.abort_reason = ""
        self.user: Optional[str] = None




class SessionCatalog:
    def __init__(self, engine: Any) -> None:
        self._engine = engine
        self._sessions: dict[bytes, Session] = {}
        self._lock = threading.Lock()
        self._reaper: Optional[threading.Thread] = None
        self._stop = threading.Event()

    # -- lookup -------------------------------------------------------------------------------
    def session(self, lsid: Any, key: bytes) -> Session:
        with self._lock:
            session = self._sessions.get(key)
            if session is None:
                session = self._sessions[key] = Session(key, lsid)
            session.last_use = time.time()
            return session

    def find(self, key: bytes) -> Optional[Session]:
        return self._sessions.get(key)

    @contextmanager
    def checkout(self, session: Session) -> Iterator[Session]:
        """Run one operation on the session (others on it wait)."""
        with session.lock:
            session.last_use = time.time()
            yield session

    def all(self) -> list[Session]:
        with self._lock:
            return list(self._sessions.values())

    # -- ending sessions -------------------------------------------------------------------------
    def end(self, keys: list[bytes]) -> None:
        for key in keys:
            with self._lock:
                session = self._sessions.pop(key, None)
            if session is not None:
                self.abort_open(session, "session ended")

    def kill_all(self) -> None:
        self.end([s.key for s in self.all()])

    def abort_open(self, session: Session, reason: str) -> None:
        from .transactions import abort
        with session.lock:
            txn = session.txn
            if txn is not None:
                abort(self._engine, txn)
                session.txn = None
                session.state = TxnState.ABORTED
                session.abort_reason = reason
                self._engine.cursors.kill_owned_by(txn.id)

    # -- housekeeping --------------------------------------------------------------------------
    def ensure_reaper(self) -> None:
        if self._reaper is None:
            self._reaper = threading.Thread(target=self._reap_loop, name="ginkgodb-sessions", daemon=True)
            self._reaper.start()

    def _reap_loop(self) -> None:
        while not self._stop.wait(1.0):
            try:
                self.reap()
            except Exception:  # a failed pass is retried at the next second
                import logging
                logging.getLogger("ginkgodb.sessions").exception("session reaper pass failed")

    def reap(self, now: Optional[float] = None) -> None:
        """Abort transactions past their lifetime limit; end sessions idle past the timeout."""
        now = time.time() if now is None else now
        limit = SETTINGS.transaction_lifetime_limit_seconds
        idle = SETTINGS.logical_session_timeout_minutes * 60
        for session in self.all():
            txn = session.txn
            if txn is not None and time.monotonic() - txn.started > limit:
                if session.lock.acquire(timeout=0):  # busy sessions are checked next time
                    try:
                        if session.txn is txn:
                            self.abort_open(session, "it exceeded transactionLifetimeLimitSeconds")
                    finally:
                        session.lock.release()
            elif now - session.last_use > idle and session.txn is None:
                with self._lock:
                    self._sessions.pop(session.key, None)

    def stop(self) -> None:
        self._stop.set()
        if self._reaper is not None:
            self._reaper.join(timeout=2)
        for session in self.all():
            if session.txn is not None:
                self.abort_open(session, "shutdown")

    # -- retryable writes ----------------------------------------------------------------------
    def stored_retryable(self, key: bytes) -> Optional[dict]:
        """The last retryable write stored for a session: {txnNumber, result}."""
        with self._engine.kv.snapshot() as snap:
            raw = snap.get(layout.retryable_write_key(key))
        return bson.decode(raw) if raw is not None else None

    def describe(self, session: Session) -> dict:
        """A `$listLocalSessions` document."""
        import datetime
        out: dict = {"_id": session.lsid,
                     "lastUse": datetime.datetime.fromtimestamp(session.last_use, datetime.UTC)
                     .replace(tzinfo=None)}
        if session.user:
            out["user"] = {"name": session.user}
        return out
