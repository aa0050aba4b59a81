"""A minimal ClientSession: enough for `with client.start_session() as s:` and `session=` arguments.

Commands run with an explicit session carry its `lsid`, as pymongo sends them. Transactions are
not available: like a standalone mongod, starting one fails with IllegalOperation (20).
"""
from __future__ import annotations

import uuid
from typing import Any, Callable, Optional, TypeVar

from bson.binary import Binary
from pymongo.client_session import SessionOptions
from pymongo.errors import ConfigurationError, InvalidOperation, OperationFailure

from ..errors import ErrorCode, code_name
from .raising import MAX_WIRE_VERSION

T = TypeVar("T")

NO_TRANSACTIONS = "Transaction numbers are only allowed on a replica set member or mongos"


class ClientSession:
    """A logical session of one MongoClient (pymongo's ClientSession API, without transactions)."""

    def __init__(self, client: Any, options: SessionOptions, implicit: bool = False) -> None:
        self._client = client
        self._options = options
        self._implicit = implicit
        self._session_id = {"id": Binary(uuid.uuid4().bytes, 4)}
        self._ended = False
        self._cluster_time: Optional[dict] = None
        self._operation_time: Any = None
        self._snapshot_time: Any = None

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
        return False

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
        self._ended = True

    def __enter__(self) -> "ClientSession":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.end_session()

    def start_transaction(self, read_concern: Any = None, write_concern: Any = None,
                          read_preference: Any = None, max_commit_time_ms: Any = None) -> Any:
        """Not supported: fails as a standalone mongod does."""
        self._check_ended()
        if self._options.snapshot:
            raise InvalidOperation("Transactions are not supported in snapshot sessions")
        code = ErrorCode.IllegalOperation
        raise OperationFailure(NO_TRANSACTIONS, int(code), {"ok": 0.0, "errmsg": NO_TRANSACTIONS,
                                                            "code": int(code),
                                                            "codeName": code_name(code)},
                               MAX_WIRE_VERSION)

    def with_transaction(self, callback: Callable[["ClientSession"], T], read_concern: Any = None,
                         write_concern: Any = None, read_preference: Any = None,
                         max_commit_time_ms: Any = None) -> T:
        self.start_transaction(read_concern, write_concern, read_preference, max_commit_time_ms)
        raise AssertionError("unreachable")  # pragma: no cover

    def commit_transaction(self) -> None:
        self._check_ended()
        raise InvalidOperation("No transaction started")

    def abort_transaction(self) -> None:
        self._check_ended()
        raise InvalidOperation("No transaction started")

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
        """Attach this session to a command, refusing sessions from other clients."""
        if self._client is not client:
            raise InvalidOperation("Can only use session with the MongoClient that started it")
        self._check_ended()
        cmd["lsid"] = self._session_id


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
