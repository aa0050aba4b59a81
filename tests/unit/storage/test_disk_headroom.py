"""The preallocated reserve past the data file's last page (storage/disk_space.py): kept after
every commit, measured only when what the commits since the last measurement may have added
does not fit in the room that measurement left above it."""
from __future__ import annotations

import os

import pytest

from ginkgodb.storage.disk_space import UNBOUNDED
from ginkgodb.storage.lmdb_engine import DATA_FILE, LmdbEngine

RESERVE = 16 << 20   # the default: a quarter of it is the room between measurements


@pytest.fixture
def engine(tmp_path):
    kv = LmdbEngine(str(tmp_path / "d"), map_size=1 << 28, reserve_bytes=RESERVE)
    headroom = kv._headroom
    measured = []
    used_end = headroom._used_end

    def counted() -> int:
        measured.append(1)
        return used_end()

    headroom._used_end = counted
    kv.measured = measured
    yield kv
    kv.close()


def _reserve_left(kv) -> int:
    """Bytes preallocated past the last used page, looked at directly."""
    size = os.path.getsize(os.path.join(kv.path, DATA_FILE))
    info, stat = kv._env.info(), kv._env.stat()
    return size - (info["last_pgno"] + 1) * stat["psize"]


def test_small_commits_keep_the_reserve_and_are_measured_once_in_many(engine):
    commits = 400
    for i in range(commits):
        with engine.begin(write=True) as txn:
            for j in range(3):
                txn.put(b"%06d-%d" % (i, j), b"v" * 300)
            if i > 10:
                txn.delete(b"%06d-0" % (i - 10))
        assert _reserve_left(engine) >= RESERVE, f"commit {i}"
    assert 0 < len(engine.measured) < commits / 4


def test_a_commit_larger_than_the_room_is_measured_and_the_reserve_kept(engine):
    with engine.begin(write=True) as txn:
        txn.put(b"small", b"x")
    before = len(engine.measured)
    with engine.begin(write=True) as txn:
        txn.put(b"large", b"x" * (RESERVE // 2))   # more than the quarter reserve of room
    assert len(engine.measured) == before + 1
    assert _reserve_left(engine) >= RESERVE


def test_a_commit_that_did_not_count_its_changes_is_measured(engine):
    with engine.begin(write=True) as txn:
        txn.put(b"small", b"x")
    before = len(engine.measured)
    with engine.begin(write=True) as txn:
        txn.put_many([(b"a", b"1"), (b"b", b"2")])
    assert len(engine.measured) == before + 1


def test_a_commit_after_another_process_committed_is_measured(engine):
    with engine.begin(write=True) as txn:
        txn.put(b"small", b"x")
    headroom = engine._headroom
    before = len(engine.measured)
    last = headroom._last_txn
    headroom.after_commit(1, 10, last + 1)     # the next transaction: ours alone
    assert len(engine.measured) == before
    headroom.after_commit(1, 10, last + 3)     # one id skipped: another process committed it
    assert len(engine.measured) == before + 1
    headroom.after_commit(UNBOUNDED, 0, last + 4)
    assert len(engine.measured) == before + 2
