"""Shared fixtures: every storage-level and engine-level test runs on both engines."""
from __future__ import annotations

import pytest

from ginkgodb.storage import MemoryEngine

ENGINES = ["memory", "lmdb"]


def make_kv(kind: str, tmp_path):
    if kind == "memory":
        return MemoryEngine()
    from ginkgodb.storage.lmdb_engine import LmdbEngine
    return LmdbEngine(str(tmp_path / "data"), map_size=1 << 30)


@pytest.fixture(params=ENGINES)
def kv(request, tmp_path):
    engine = make_kv(request.param, tmp_path)
    yield engine
    engine.close()


@pytest.fixture(params=ENGINES)
def engine(request, tmp_path):
    from ginkgodb.engine import Engine
    eng = Engine(make_kv(request.param, tmp_path))
    yield eng
    eng.close()
