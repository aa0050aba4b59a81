"""Several processes on one LMDB data directory (docs/design/multiprocess.md): embedded engines
share it, a server's exclusive engine keeps everyone else out, leases have one holder, commits of
other processes are told apart from this process's own, and a map grown elsewhere is adopted."""
from __future__ import annotations

import multiprocessing
import os
import signal
import time

import pytest

from ginkgodb.errors import StorageError
from ginkgodb.storage import lmdb_engine
from ginkgodb.storage.lmdb_engine import LmdbEngine

SPAWN = multiprocessing.get_context("spawn")


def _in_child(target, *args):
    """Run `target(*args)` in a spawned process; its return value (or its exception's text)."""
    with SPAWN.Pool(1) as pool:
        return pool.apply(target, args)


def open_and_report(path: str, shared: bool) -> str:
    try:
        LmdbEngine(path, map_size=1 << 26, shared=shared, sync_interval=0).close()
    except StorageError as exc:
        return f"{exc.kind}: {exc.message}"
    return "opened"


def write_and_report(path: str, key: bytes, value: bytes, lease: str) -> tuple[bool, bytes]:
    kv = LmdbEngine(path, map_size=1 << 26, shared=True, sync_interval=0)
    try:
        with kv.writer() as txn:
            txn.put(key, value)
        with kv.snapshot() as snap:
            seen = snap.get(b"parent")
        return kv.lease(lease), seen or b""
    finally:
        kv.close()


def grow_map(path: str, map_size: int, n: int) -> int:
    kv = LmdbEngine(path, map_size=map_size, shared=True, sync_interval=0, reserve_bytes=0)
    try:
        with kv.writer() as txn:
            for i in range(n):
                txn.put(b"big%06d" % i, b"x" * 4000)
        return kv._env.info()["map_size"]
    finally:
        kv.close()


def test_embedded_processes_share_a_directory_and_see_each_others_commits(tmp_path):
    path = str(tmp_path / "d")
    kv = LmdbEngine(path, map_size=1 << 26, shared=True, sync_interval=0)
    try:
        with kv.writer() as txn:
            txn.put(b"parent", b"p")
        assert kv.lease("a.lock")
        leased, seen = _in_child(write_and_report, path, b"child", b"c", "a.lock")
        assert seen == b"p"            # the child read the parent's commit
        assert leased is False         # the parent holds the lease
        with kv.snapshot() as snap:
            assert snap.get(b"child") == b"c"
        leased, _ = _in_child(write_and_report, path, b"child", b"c", "b.lock")
        assert leased is True          # a free lease is taken
    finally:
        kv.close()
    leased, _ = _in_child(write_and_report, path, b"again", b"x", "a.lock")
    assert leased is True              # released when its holder closed


def test_a_server_and_embedded_processes_keep_each_other_out(tmp_path):
    path = str(tmp_path / "d")
    server = LmdbEngine(path, map_size=1 << 26, shared=False, sync_interval=0)
    try:
        answer = _in_child(open_and_report, path, True)
        assert answer.startswith("locked: ") and "in use by a ginkgodb server" in answer
    finally:
        server.close()
    embedded = LmdbEngine(path, map_size=1 << 26, shared=True, sync_interval=0)
    try:
        answer = _in_child(open_and_report, path, False)
        assert answer.startswith("locked: ") and "in use by another ginkgodb process" in answer
        assert _in_child(open_and_report, path, True) == "opened"
    finally:
        embedded.close()


def test_one_environment_per_directory_per_process(tmp_path):
    path = str(tmp_path / "d")
    kv = LmdbEngine(path, map_size=1 << 26, shared=True, sync_interval=0)
    try:
        with pytest.raises(StorageError) as err:
            LmdbEngine(path, map_size=1 << 26, shared=True, sync_interval=0)
        assert err.value.kind == "locked" and "already open in this process" in err.value.message
    finally:
        kv.close()


def test_commits_of_other_processes_are_told_from_our_own(tmp_path):
    path = str(tmp_path / "d")
    kv = LmdbEngine(path, map_size=1 << 26, shared=True, sync_interval=0)
    try:
        snap = kv.snapshot()
        with kv.writer() as txn:
            txn.put(b"mine", b"1")
        with kv.writer() as txn:
            assert not kv.commits_elsewhere_since(snap, txn)   # only our own commit since
            txn.abort()
        stamp = kv.commit_stamp()
        _in_child(write_and_report, path, b"theirs", b"2", "x.lock")
        assert kv.commit_stamp() > stamp
        with kv.writer() as txn:
            assert kv.commits_elsewhere_since(snap, txn)
            txn.abort()
        snap.release()
    finally:
        kv.close()


def test_an_exclusive_engine_never_sees_other_writers_and_holds_every_lease(tmp_path):
    kv = LmdbEngine(str(tmp_path / "d"), map_size=1 << 26, sync_interval=0)
    try:
        snap = kv.snapshot()
        with kv.writer() as txn:
            assert not kv.commits_elsewhere_since(snap, txn)
        snap.release()
        assert kv.lease("ttl-monitor.lock")
        assert not os.path.exists(tmp_path / "d" / "ttl-monitor.lock")
    finally:
        kv.close()


def test_a_map_grown_by_another_process_is_adopted(tmp_path):
    path = str(tmp_path / "d")
    small = 1 << 22
    kv = LmdbEngine(path, map_size=small, shared=True, sync_interval=0, reserve_bytes=0)
    try:
        grown = _in_child(grow_map, path, 1 << 25, 2000)   # ~8 MB: beyond our 4 MB map
        assert grown > small
        with kv.snapshot() as snap:
            assert snap.get(b"big001999") == b"x" * 4000
        with kv.writer() as txn:
            txn.put(b"after", b"1")
        assert kv._env.info()["map_size"] == grown
    finally:
        kv.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_an_engine_inherited_through_fork_is_refused_with_the_reason(tmp_path):
    kv = LmdbEngine(str(tmp_path / "d"), map_size=1 << 26, shared=True, sync_interval=0)
    held = kv.snapshot()   # a reader slot of the parent's, which the child must not free
    try:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: never returns into pytest
            code = 1
            try:
                kv.snapshot()
            except StorageError as exc:
                code = 0 if exc.kind == "closed" and exc.message == lmdb_engine.FORKED else 2
            try:   # nor can the child open it again (LMDB: one environment per file per process)
                LmdbEngine(str(tmp_path / "d"), map_size=1 << 26, shared=True, sync_interval=0)
                code = code or 3
            except StorageError as exc:
                code = code or (0 if exc.kind == "locked" and "close every client" in exc.message else 4)
            os.write(write, bytes([code]))
            os._exit(0)
        os.close(write)
        assert os.read(read, 1) == b"\x00"
        os.waitpid(pid, 0)
        os.close(read)
        assert str(os.getpid()) in kv._env.readers()   # the open snapshot's slot is still ours
        assert held.get(b"k") is None
        held.release()
        with kv.snapshot() as snap:   # the parent's engine is untouched
            assert snap.get(b"k") is None
    finally:
        kv.close()


def hold_lease_until_killed(path: str, name: str, ready) -> None:
    kv = LmdbEngine(path, map_size=1 << 26, shared=True, sync_interval=0)
    ready.put(kv.lease(name))
    time.sleep(600)


def test_a_lease_passes_on_when_its_holder_is_killed(tmp_path):
    path = str(tmp_path / "d")
    kv = LmdbEngine(path, map_size=1 << 26, shared=True, sync_interval=0)
    try:
        ready = SPAWN.Queue()
        holder = SPAWN.Process(target=hold_lease_until_killed, args=(path, "ttl-monitor.lock", ready))
        holder.start()
        try:
            assert ready.get(timeout=120) is True
            assert not kv.lease("ttl-monitor.lock")
        finally:
            os.kill(holder.pid, signal.SIGKILL)
            holder.join(60)
        assert kv.lease("ttl-monitor.lock")   # the OS dropped the dead holder's lock
        with kv.writer() as txn:               # writes go on
            txn.put(b"after", b"1")
    finally:
        kv.close()
