"""The two storage engines every storage- and engine-level test runs on."""
from __future__ import annotations

from ginkgodb.storage import MemoryEngine

ENGINES = ["memory", "lmdb"]


def make_kv(kind: str, tmp_path):
    if kind == "memory":
        return MemoryEngine()
    from ginkgodb.storage.lmdb_engine import LmdbEngine
    return LmdbEngine(str(tmp_path / "data"), map_size=1 << 30)
