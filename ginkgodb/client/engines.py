"""One Engine per data directory per process, shared by every client that opens it.

LMDB allows a single environment per path in a process, so two MongoClient("./data") must share
one Engine. Entries are keyed by the directory's real path and reference counted: the last
release closes the engine. In-memory engines are never shared: each MongoClient() is its own
database set.

Several processes may open one directory at once (the engine is opened `shared`: web server
workers, docs/design/multiprocess.md). A process forked from one that had the directory open
inherits an engine it must not use; the registry forgets it in the child, where the storage
refuses the old engine and a new one with the reason (close clients before forking).
"""
from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from ..engine import Engine

_lock = threading.Lock()
_shared: dict[str, list] = {}      # real path -> [engine, reference count]


def data_key(path: str) -> str:
    """The registry key of a data directory: symlinks and relative forms name one entry."""
    return os.path.realpath(os.path.abspath(os.path.expanduser(path)))


def acquire(path: Optional[str], compression: Optional[str] = None) -> tuple[Engine, Optional[str]]:
    """The engine for `path` (None: a new in-memory engine) and the key to release it with.
    `compression` is the default codec of new collections ("none" when None); clients sharing an
    engine must not ask for different ones."""
    from ..engine import Engine
    if path is None:
        return Engine.open(None, compression=compression or "none"), None
    key = data_key(path)
    with _lock:
        entry = _shared.get(key)
        if entry is None:
            entry = _shared[key] = [Engine.open(key, compression=compression or "none", shared=True), 0]
        elif compression is not None and compression != entry[0].default_compression:
            from pymongo.errors import ConfigurationError
            raise ConfigurationError(f"storageCompression={compression!r}: the data directory is already open "
                                     f"in this process with storageCompression={entry[0].default_compression!r}")
        entry[1] += 1
        return entry[0], key


def _forget_after_fork() -> None:
    """In a forked child: the parent's engines are unusable here (the storage refuses them)."""
    global _lock
    _lock = threading.Lock()
    _shared.clear()


os.register_at_fork(after_in_child=_forget_after_fork)


def release(engine: Engine, key: Optional[str]) -> None:
    """Drop one reference; the engine closes when no client uses it any more."""
    if key is None:
        engine.close()
        return
    with _lock:
        entry = _shared.get(key)
        if entry is None or entry[0] is not engine:
            return
        entry[1] -= 1
        if entry[1] > 0:
            return
        del _shared[key]
    engine.close()


def open_count(path: str) -> int:
    """How many clients hold the engine of `path` (0 when it is closed)."""
    with _lock:
        entry = _shared.get(data_key(path))
        return entry[1] if entry else 0
