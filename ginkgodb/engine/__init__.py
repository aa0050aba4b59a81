"""Engine: catalog, collections, index maintenance, cursors, explain. Built on storage + query.

This face is the engine's API for the commands layer (tests/unit/test_layers.py keeps commands
from importing anything deeper): the Engine with its operations (engine/operations.py), the
typed requests they take, and the cursors they return.
"""
from __future__ import annotations

from .change_stream import DEFAULT_AWAIT_SECONDS, ChangeStreamCursor
from .cursors import DEFAULT_FIRST_BATCH, MAX_WORKERS, ServerCursor, TailableCursor, cursor_worker
from .engine import Engine
from .layout import session_key
from .names import check_collection_name, check_db_name
from .no_wait import UnboundedPlan, WouldBlock, refusing_waits, waits_refused
from .operations import IndexBuild, IndexChange
from .oplog import default_size as default_oplog_size
from .oplog_apply import OplogApplyError
from .oplog_apply import touched_documents as oplog_touched_documents
from .plan_builder import FindRequest, id_hack_key, may_idhack
from .plan_cache import IndexFilter
from .plan_cache import shape_key as query_shape_key
from .query_stats import aggregate_shape, find_shape
from .retryable import RetryableView
from .sessions import TxnState
from .settings import SETTINGS
from .snapshot_reads import SnapshotView
from .timeseries import buckets_name as timeseries_buckets_name
from .timeseries import view_pipeline as timeseries_view_pipeline
from .transactions import Transaction, TransactionView
from .transactions import abort as abort_transaction
from .transactions import commit as commit_transaction
from .ttl import monitor_sleep, set_monitor_sleep
from .writes import DeleteStatement, FindAndModifyRequest, UpdateStatement, WriteOutcome

__all__ = [
    "OplogApplyError",
    "IndexFilter",
    "query_shape_key",
    "oplog_touched_documents",
    "timeseries_buckets_name",
    "timeseries_view_pipeline",
    "ChangeStreamCursor",
    "DEFAULT_AWAIT_SECONDS",
    "DEFAULT_FIRST_BATCH",
    "DeleteStatement",
    "Engine",
    "FindAndModifyRequest",
    "FindRequest",
    "IndexBuild",
    "IndexChange",
    "MAX_WORKERS",
    "RetryableView",
    "SETTINGS",
    "aggregate_shape",
    "find_shape",
    "SnapshotView",
    "ServerCursor",
    "TailableCursor",
    "Transaction",
    "TransactionView",
    "TxnState",
    "UpdateStatement",
    "WriteOutcome",
    "UnboundedPlan",
    "WouldBlock",
    "refusing_waits",
    "waits_refused",
    "abort_transaction",
    "check_collection_name",
    "cursor_worker",
    "check_db_name",
    "commit_transaction",
    "default_oplog_size",
    "id_hack_key",
    "may_idhack",
    "monitor_sleep",
    "session_key",
    "set_monitor_sleep",
]
