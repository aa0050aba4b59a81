"""Two writers on one data directory (issue 8, point 3).

The OS lock on `data.mdb` keeps a second process out of an exclusive (server) engine even when
`ginkgodb.lock` is deleted; and when two writers do share a directory (embedded clients, which
open it shared: docs/design/multiprocess.md, or the lock bypassed), record ids still come from
the per-collection counter read and advanced inside each storage transaction, so two writers
never hand out one id twice.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ginkgodb import MongoClient
from ginkgodb.errors import StorageError
from ginkgodb.storage import lmdb_engine
from ginkgodb.storage.lmdb_engine import LmdbEngine

ROOT = str(Path(__file__).resolve().parents[2])


def _python(code: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_a_second_engine_on_one_directory_is_refused_even_without_the_lock_file(tmp_path):
    path = str(tmp_path / "d")
    first = LmdbEngine(path, map_size=1 << 26)
    try:
        os.unlink(os.path.join(path, lmdb_engine.LOCK_FILE))
        with pytest.raises(StorageError) as err:  # same process, another engine
            LmdbEngine(path, map_size=1 << 26)
        assert err.value.kind == "locked"
        other = _python("""
            import sys
            from ginkgodb.errors import StorageError
            from ginkgodb.storage.lmdb_engine import LmdbEngine
            try:
                LmdbEngine(sys.argv[1], map_size=1 << 26)
            except StorageError as exc:
                print(exc.kind)
            else:
                print("opened")
        """, path)
        assert other.stdout.strip() == "locked", other.stderr  # another process
    finally:
        first.close()
    LmdbEngine(path, map_size=1 << 26).close()  # free again once the first is closed


def test_a_second_server_on_a_locked_directory_exits_100(tmp_path):
    path = str(tmp_path / "d")
    holder = LmdbEngine(path, map_size=1 << 26)
    try:
        os.unlink(os.path.join(path, lmdb_engine.LOCK_FILE))
        proc = _python("from ginkgodb.cli import main; raise SystemExit(main())", "serve", "--port", "0",
                       "--dbpath", path, "--quiet", timeout=60)
        assert proc.returncode == 100
        assert "DBPathInUse" in proc.stderr
    finally:
        holder.close()


_BYPASSING_WRITER = """
    import sys
    from ginkgodb.storage import lmdb_engine
    lmdb_engine._lock = lambda fd, shared=False: True   # the lock bypassed: two writers at once
    from ginkgodb import MongoClient
    path, n = sys.argv[1], int(sys.argv[2])
    coll = MongoClient(path).t.c
    print("ready", flush=True)
    sys.stdin.readline()
    for i in range(n):
        coll.insert_one({"_id": "child-%d" % i, "by": "child"})
"""


def test_record_ids_never_collide_even_with_the_lock_bypassed(tmp_path, monkeypatch):
    path = str(tmp_path / "d")
    n = 400
    monkeypatch.setattr(lmdb_engine, "_lock", lambda fd, shared=False: True)
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(_BYPASSING_WRITER), path, str(n)],
                             env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    client = MongoClient(path)
    try:
        assert child.stdout.readline().strip() == "ready"
        coll = client.t.c
        child.stdin.write("go\n")
        child.stdin.flush()
        mine = 0
        while mine < n or child.poll() is None:  # writing for as long as the child writes
            coll.insert_one({"_id": f"parent-{mine}", "by": "parent"})
            mine += 1
        assert child.wait(120) == 0
        total = n + mine
        ids = [d["_id"] for d in coll.find({}, {"_id": 1})]
        assert len(ids) == len(set(ids)) == total  # nothing overwritten
        assert coll.count_documents({}) == total
        assert coll.estimated_document_count() == total
        writers = [d["by"] for d in coll.find().sort("$natural", 1)]
        assert sum(a != b for a, b in zip(writers, writers[1:])) >= 2  # the writers did interleave
    finally:
        client.close()
        if child.poll() is None:
            child.kill()
    monkeypatch.undo()
    again = MongoClient(path)  # and the damage would survive a restart: there is none
    try:
        coll = again.t.c
        assert coll.count_documents({"by": "child"}) == n and coll.count_documents({"by": "parent"}) == mine
        assert len({d["_id"] for d in coll.find()}) == total
    finally:
        again.close()
