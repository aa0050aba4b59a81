"""Engine: catalog, collections, index maintenance, cursors, explain. Built on storage + query.

This face is the engine's API for the commands layer (tests/unit/test_layers.py keeps commands
from importing anything deeper): the Engine with its operations (engine/operations.py), the
typed requests they take, and the cursors they return.
"""
from __future__ import annotations

from .change_stream import DEFAULT_AWAIT_SECONDS, ChangeStreamCursor
from .cursors import DEFAULT_FIRST_BATCH, ServerCursor, TailableCursor
from .engine import Engine
from .names import check_collection_name, check_db_name
from .operations import IndexBuild, IndexChange
from .oplog import default_size as default_oplog_size
from .plan_builder import FindRequest, id_hack_key
from .writes import DeleteStatement, FindAndModifyRequest, UpdateStatement, WriteOutcome

__all__ = ["DEFAULT_AWAIT_SECONDS", "DEFAULT_FIRST_BATCH", "ChangeStreamCursor", "DeleteStatement", "Engine",
           "FindAndModifyRequest", "FindRequest", "IndexBuild", "IndexChange", "ServerCursor", "TailableCursor",
           "UpdateStatement", "WriteOutcome", "check_collection_name", "check_db_name", "default_oplog_size",
           "id_hack_key"]
