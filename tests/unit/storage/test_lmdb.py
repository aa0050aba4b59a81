"""LMDB-specific promises: reopening finds the data, one process per directory."""
from __future__ import annotations

import pytest

from ginkgodb.errors import StorageError
from ginkgodb.storage.lmdb_engine import LmdbEngine


def test_reopen_finds_committed_data(tmp_path):
    path = str(tmp_path / "d")
    kv = LmdbEngine(path, map_size=1 << 26)
    with kv.begin(write=True) as txn:
        txn.put(b"k", b"v")
    kv.close()
    kv = LmdbEngine(path, map_size=1 << 26)
    with kv.begin() as txn:
        assert txn.get(b"k") == b"v"
    kv.close()


def test_second_opener_of_a_directory_gets_a_clear_error(tmp_path):
    path = str(tmp_path / "d")
    kv = LmdbEngine(path, map_size=1 << 26)
    with pytest.raises(StorageError) as err:
        LmdbEngine(path, map_size=1 << 26)
    assert err.value.kind == "locked"
    assert "in use" in err.value.message
    kv.close()
    LmdbEngine(path, map_size=1 << 26).close()  # free again once the first is closed


def test_sync_is_callable_and_size_on_disk_grows(tmp_path):
    kv = LmdbEngine(str(tmp_path / "d"), map_size=1 << 26)
    before = kv.size_on_disk()
    with kv.begin(write=True) as txn:
        for i in range(2000):
            txn.put(b"%06d" % i, b"x" * 200)
    kv.sync()
    assert kv.size_on_disk() > before
    kv.close()


def test_data_files_are_owner_only_as_mongod_makes_them(tmp_path):
    import os
    import stat
    path = tmp_path / "fresh"
    kv = LmdbEngine(str(path), map_size=1 << 26)
    with kv.begin(write=True) as txn:
        txn.put(b"k", b"v")
    kv.close()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o700
    for name in os.listdir(path):
        assert stat.S_IMODE(os.stat(path / name).st_mode) == 0o600, name


def test_an_existing_directory_keeps_its_mode(tmp_path):
    import os
    import stat
    path = tmp_path / "mine"
    path.mkdir()
    os.chmod(path, 0o750)
    LmdbEngine(str(path), map_size=1 << 26).close()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o750
