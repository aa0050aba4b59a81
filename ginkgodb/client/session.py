"""ClientSession: pymongo's session API, transactions included, over the command layer.

The session keeps pymongo's client-side transaction state machine and sends exactly the
commands pymongo sends (`startTransaction`/`autocommit`/`txnNumber` on the operations,
`commitTransaction`/`abortTransaction` at the end). Whether a transaction is possible is decided
by the server side (the commands layer), never here: code written against pymongo sees the same
answers, from the same place, embedded and over the wire.
"""
from __future__ import annotations

import enum
import random
import time
import uuid
from collections.abc import Callable
from typing import Any, Optional, TypeVar

from bson.binary import Binary
from bson.int64 import Int64
from pymongo.client_session import SessionOptions, TransactionOptions
from pymongo.errors import ConfigurationError, InvalidOperation, PyMongoError
from pymongo.read_preferences import ReadPreference

T = TypeVar("T")

#: the convenient API gives up retrying after this long (the transactions-convenient-api spec)
WITH_TRANSACTION_TIMEOUT = 120.0



#: the embedded client's pause before retrying a transaction that conflicted: random in
#: [0, min(cap, first * 2^attempt)]. Threads of one process retry in step otherwise and collide
#: again (bench W17, 4 threads over 10 accounts on LMDB: 80 retries per commit without it)
BACKOFF_FIRST, BACKOFF_CAP = 0.001, 0.05


def _back_off(attempt: int) -> None:
    time.sleep(random.uniform(0, min(BACKOFF_CAP, BACKOFF_FIRST * 2 ** attempt)))

class TxnState(enum.Enum):
    NONE = 1
    STARTING = 2
    IN_PROGRESS = 3
    COMMITTED = 4
    COMMITTED_EMPTY = 5
    ABORTED = 6


class ClientSession:
    """A logical session of one MongoClient (pymongo's ClientSession API)."""

    def __init__(self, client: Any, options: SessionOptions, implicit: bool = False) -> None:
        self._client = client
        self._options = options
        self._implicit = implicit
        self._session_id = {"id": Binary(uuid.uuid4().bytes, 4)}
        self._ended = False
        self._cluster_time: Optional[dict] = None
        self._operation_time: Any = None
        self._snapshot_time: Any = None
        self._txn_number = 0
        self._txn_state = TxnState.NONE
        self._txn_options: Optional[TransactionOptions] = None

    @property
    def client(self) -> Any:
        return self._client

    @property
    def options(self) -> SessionOptions:
        return self._options

    @property
    def session_id(self) -> dict:
        self._check_ended()
        return self._session_id

    @property
    def has_ended(self) -> bool:
        return self._ended

    @property
    def in_transaction(self) -> bool:
        return self._txn_state in (TxnState.STARTING, TxnState.IN_PROGRESS)

    def _txn_read_preference(self) -> Any:
        """The transaction's read preference (pymongo's Cursor asks its session for it)."""
        if self.in_transaction and self._txn_options is not None:
            return self._txn_options.read_preference
        return None

    @property
    def cluster_time(self) -> Optional[dict]:
        return self._cluster_time

    @property
    def operation_time(self) -> Any:
        return self._operation_time

    def advance_cluster_time(self, cluster_time: Any) -> None:
        if not isinstance(cluster_time, dict) and not hasattr(cluster_time, "get"):
            raise TypeError("cluster_time must be a subclass of collections.Mapping")
        if not hasattr(cluster_time.get("clusterTime"), "time"):
            raise ValueError("Invalid cluster_time")
        self._cluster_time = cluster_time

    def advance_operation_time(self, operation_time: Any) -> None:
        if not hasattr(operation_time, "time") or not hasattr(operation_time, "inc"):
            raise TypeError("operation_time must be an instance of bson.timestamp.Timestamp")
        self._operation_time = operation_time

    def end_session(self) -> None:
        if self._ended:
            return
        if self.in_transaction:
            self.abort_transaction()
        self._ended = True

    def __enter__(self) -> ClientSession:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.end_session()

    # ------------------------------------------------------------------ transactions
    def start_transaction(self, read_concern: Any = None, write_concern: Any = None,
                          read_preference: Any = None, max_commit_time_ms: Any = None) -> TransactionContext:
        """Begin a transaction; its first operation tells the server (pymongo's behaviour). As a
        context manager it commits when the block ends and aborts when it raises, as pymongo's."""
        self._check_ended()
        if self._options.snapshot:
            raise InvalidOperation("Transactions are not supported in snapshot sessions")
        if self.in_transaction:
            raise InvalidOperation("Transaction already in progress")
        defaults = self._options.default_transaction_options
        read_concern = read_concern or (defaults and defaults.read_concern) or self._client.read_concern
        write_concern = write_concern or (defaults and defaults.write_concern) or self._client.write_concern
        read_preference = (read_preference or (defaults and defaults.read_preference)
                           or self._client.read_preference)
        if max_commit_time_ms is None and defaults is not None:
            max_commit_time_ms = defaults.max_commit_time_ms
        self._txn_options = TransactionOptions(read_concern, write_concern, read_preference,
                                               max_commit_time_ms)
        if not self._txn_options.write_concern.acknowledged:
            raise ConfigurationError("transactions do not support unacknowledged write concern: "
                                     f"{self._txn_options.write_concern!r}")
        self._txn_number += 1
        self._txn_state = TxnState.STARTING
        return TransactionContext(self)

    def commit_transaction(self) -> None:
        self._check_ended()
        state = self._txn_state
        if state is TxnState.NONE:
            raise InvalidOperation("No transaction started")
        if state in (TxnState.STARTING, TxnState.COMMITTED_EMPTY):
            self._txn_state = TxnState.COMMITTED_EMPTY  # nothing reached the server
            return
        if state is TxnState.ABORTED:
            raise InvalidOperation("Cannot call commitTransaction after calling abortTransaction")
        self._txn_state = TxnState.COMMITTED
        self._finish("commitTransaction")

    def abort_transaction(self) -> None:
        self._check_ended()
        state = self._txn_state
        if state is TxnState.NONE:
            raise InvalidOperation("No transaction started")
        if state is TxnState.STARTING:
            self._txn_state = TxnState.ABORTED
            return
        if state is TxnState.ABORTED:
            raise InvalidOperation("Cannot call abortTransaction twice")
        if state in (TxnState.COMMITTED, TxnState.COMMITTED_EMPTY):
            raise InvalidOperation("Cannot call abortTransaction after calling commitTransaction")
        try:
            self._finish("abortTransaction")
        except PyMongoError:
            pass  # pymongo ignores abort errors: the server aborts on its own
        finally:
            self._txn_state = TxnState.ABORTED

    def _finish(self, name: str) -> None:
        options = self._txn_options
        cmd: dict = {name: 1}
        if name == "commitTransaction" and options is not None and options.max_commit_time_ms:
            cmd["maxTimeMS"] = options.max_commit_time_ms
        write_concern = options.write_concern if options is not None else None
        self._client._runner.run("admin", cmd, session=self, write_concern=write_concern,
                                 parse_write_concern_error=True)

    def with_transaction(self, callback: Callable[[ClientSession], T], read_concern: Any = None,
                         write_concern: Any = None, read_preference: Any = None,
                         max_commit_time_ms: Any = None) -> T:
        """Run `callback` in a transaction and commit it, retrying as the convenient API says."""
        started = time.monotonic()
        attempt = 0
        while True:
            self.start_transaction(read_concern, write_concern, read_preference, max_commit_time_ms)
            try:
                result = callback(self)
            except BaseException as exc:
                if self.in_transaction:
                    self.abort_transaction()
                if (isinstance(exc, PyMongoError) and exc.has_error_label("TransientTransactionError")
                        and time.monotonic() - started < WITH_TRANSACTION_TIMEOUT):
                    attempt += 1
                    _back_off(attempt)
                    continue
                raise
            if not self.in_transaction:
                return result  # the callback committed or aborted on its own
            while True:
                try:
                    self.commit_transaction()
                except PyMongoError as exc:
                    within = time.monotonic() - started < WITH_TRANSACTION_TIMEOUT
                    if (exc.has_error_label("UnknownTransactionCommitResult") and within
                            and getattr(exc, "code", None) != 50):  # MaxTimeMSExpired: give up
                        continue
                    if exc.has_error_label("TransientTransactionError") and within:
                        attempt += 1
                        _back_off(attempt)
                        break
                    raise
                return result

    # ------------------------------------------------------------------ plumbing
    def _check_ended(self) -> None:
        if self._ended:
            raise InvalidOperation("Cannot use ended session")

    def _update_read_concern(self, cmd: dict) -> None:
        """Reads in a causally consistent or snapshot session say so in their readConcern."""
        if self._options.causal_consistency and self._operation_time is not None:
            cmd.setdefault("readConcern", {})["afterClusterTime"] = self._operation_time
        if self._options.snapshot:
            read_concern = cmd.setdefault("readConcern", {})
            read_concern["level"] = "snapshot"
            if self._snapshot_time is not None:
                read_concern["atClusterTime"] = self._snapshot_time

    def _process_reply(self, reply: Any) -> None:
        """Track the cluster/operation times (and a snapshot's time) a reply reports."""
        if reply.get("$clusterTime") is not None:
            self._cluster_time = reply["$clusterTime"]
        if reply.get("operationTime") is not None:
            self._operation_time = reply["operationTime"]
        if self._options.snapshot and self._snapshot_time is None:
            cursor = reply.get("cursor")
            at = cursor.get("atClusterTime") if isinstance(cursor, dict) else None
            self._snapshot_time = at if at is not None else reply.get("atClusterTime")

    def _apply_to(self, cmd: dict, client: Any) -> None:
        """Attach this session (and its transaction) to a command, as pymongo does."""
        if self._client is not client:
            raise InvalidOperation("Can only use session with the MongoClient that started it")
        self._check_ended()
        cmd["lsid"] = self._session_id
        name = next(iter(cmd))
        finishing = name in ("commitTransaction", "abortTransaction")
        if not self.in_transaction and not finishing:
            if self._txn_state is not TxnState.NONE:
                self._txn_state = TxnState.NONE  # a later operation outside the transaction
            return
        if self._txn_state is TxnState.STARTING:
            options = self._txn_options
            if options is not None and options.read_preference != ReadPreference.PRIMARY:
                raise InvalidOperation("read preference in a transaction must be primary, not: "
                                       f"{options.read_preference!r}")
            cmd["startTransaction"] = True
            if options is not None and options.read_concern.level:
                cmd["readConcern"] = options.read_concern.document
            self._txn_state = TxnState.IN_PROGRESS
        cmd["txnNumber"] = Int64(self._txn_number)
        cmd["autocommit"] = False


class TransactionContext:
    """What start_transaction returns (pymongo's _TransactionContext): `with` commits the
    transaction when the block ends, aborts it when the block raises."""

    def __init__(self, session: ClientSession) -> None:
        self._session = session

    def __enter__(self) -> TransactionContext:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if self._session.in_transaction:
            if exc_type is None:
                self._session.commit_transaction()
            else:
                self._session.abort_transaction()


def check_session_for_write(session: Optional[ClientSession], write_concern: Any) -> None:
    """Explicit sessions cannot carry unacknowledged writes (pymongo's rule)."""
    if session is not None and write_concern is not None and not write_concern.acknowledged:
        raise ConfigurationError("Explicit sessions are incompatible with unacknowledged write "
                                 f"concern: {write_concern!r}")


def new_session_options(causal_consistency: Optional[bool], default_transaction_options: Any,
                        snapshot: Optional[bool]) -> SessionOptions:
    return SessionOptions(causal_consistency=causal_consistency,
                          default_transaction_options=default_transaction_options,
                          snapshot=snapshot)
