"""The storage engines every engine-level test runs on, and fresh engines for property tests."""
from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ginkgodb.storage import MemoryEngine

ENGINES = ["memory", "lmdb"]


def make_kv(kind: str, tmp_path, *, sync_interval: float = 0.1):
    """A key-value engine of `kind`; LMDB keeps its data under `tmp_path`."""
    if kind == "memory":
        return MemoryEngine()
    from ginkgodb.storage.lmdb_engine import LmdbEngine
    return LmdbEngine(str(Path(tmp_path) / "data"), map_size=1 << 30, sync_interval=sync_interval)


@contextlib.contextmanager
def fresh_engine(kind: str, root) -> Iterator:
    """An empty Engine of `kind` in its own directory under `root`, removed afterwards.

    Hypothesis runs a test body many times per function-scoped fixture, so property tests make
    one engine per example here (from a module-scoped `root`) instead of taking `engine`.
    Durability is not their subject: LMDB runs without the background flusher's fsyncs."""
    from ginkgodb.engine import Engine
    path = tempfile.mkdtemp(dir=root)
    engine = Engine(make_kv(kind, path, sync_interval=0))
    try:
        yield engine
    finally:
        engine.close()
        shutil.rmtree(path, ignore_errors=True)
