"""Engine: catalog, collections, index maintenance, cursors, explain. Built on storage + query.

This face is the engine's API for the commands layer (tests/unit/test_layers.py keeps commands
from importing anything deeper): the Engine with its operations (engine/operations.py), the
typed requests they take, and the cursors they return.
"""
from __future__ import annotations

from .cursors import DEFAULT_FIRST_BATCH, ServerCursor, TailableCursor
from .engine import Engine
from .names import check_collection_name, check_db_name
from .operations import IndexBuild, IndexChange
from .plan_builder import FindRequest, id_hack_key
from .ttl import monitor_sleep, set_monitor_sleep
from .writes import DeleteStatement, FindAndModifyRequest, UpdateStatement, WriteOutcome

__all__ = ["DEFAULT_FIRST_BATCH", "DeleteStatement", "Engine", "FindAndModifyRequest", "FindRequest",
           "IndexBuild", "IndexChange", "ServerCursor", "TailableCursor", "UpdateStatement", "WriteOutcome",
           "check_collection_name", "check_db_name", "id_hack_key", "monitor_sleep",
           "set_monitor_sleep"]
