"""Engine: catalog, collections, index maintenance, cursors, explain. Built on storage + query."""
from __future__ import annotations

from .engine import Engine

__all__ = ["Engine"]
