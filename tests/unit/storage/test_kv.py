"""The KV contract, on both engines."""
from __future__ import annotations

import threading

import pytest

from ginkgodb.errors import StorageError
from ginkgodb.storage.kv import prefix_end


def test_put_get_delete_round_trip(kv):
    with kv.begin(write=True) as txn:
        txn.put(b"a", b"1")
        txn.put(b"b", b"2")
    with kv.begin() as txn:
        assert txn.get(b"a") == b"1"
        assert txn.get(b"zz") is None
    with kv.begin(write=True) as txn:
        assert txn.delete(b"a") is True
        assert txn.delete(b"a") is False
    with kv.begin() as txn:
        assert txn.get(b"a") is None


def test_abort_discards_every_write(kv):
    with kv.begin(write=True) as txn:
        txn.put(b"keep", b"1")
    txn = kv.begin(write=True)
    txn.put(b"new", b"x")
    txn.put(b"keep", b"changed")
    txn.delete(b"keep")
    txn.abort()
    with kv.begin() as txn:
        assert txn.get(b"new") is None
        assert txn.get(b"keep") == b"1"


def test_exception_in_context_aborts(kv):
    with pytest.raises(RuntimeError):
        with kv.begin(write=True) as txn:
            txn.put(b"k", b"v")
            raise RuntimeError("boom")
    with kv.begin() as txn:
        assert txn.get(b"k") is None


def _fill(kv, keys):
    with kv.begin(write=True) as txn:
        for k in keys:
            txn.put(k, k.upper())


def test_scan_is_half_open_and_ordered_by_unsigned_bytes(kv):
    keys = [b"\x00", b"a", b"ab", b"b", b"\x7f", b"\x80", b"\xff", b"\xff\xff"]
    _fill(kv, keys)
    with kv.begin() as txn:
        assert [k for k, _ in txn.scan(b"", None)] == sorted(keys)
        assert [k for k, _ in txn.scan(b"a", b"b")] == [b"a", b"ab"]
        assert [k for k, _ in txn.scan(b"a", b"b", reverse=True)] == [b"ab", b"a"]
        assert [k for k, _ in txn.scan(b"\x80", None, reverse=True)] == [b"\xff\xff", b"\xff", b"\x80"]


def test_reverse_scan_with_bound_beyond_last_key(kv):
    _fill(kv, [b"a", b"b"])
    with kv.begin() as txn:
        assert [k for k, _ in txn.scan(b"", b"zzz", reverse=True)] == [b"b", b"a"]
        assert list(txn.scan(b"c", b"d", reverse=True)) == []


def test_prefix_end():
    assert prefix_end(b"ab") == b"ac"
    assert prefix_end(b"a\xff") == b"b"
    assert prefix_end(b"\xff\xff") is None


def test_readers_never_see_uncommitted_writes(kv):
    with kv.begin(write=True) as txn:
        txn.put(b"n", b"0")
    txn = kv.begin(write=True)
    txn.put(b"n", b"uncommitted")
    seen = []

    def read():
        with kv.begin() as r:
            seen.append(r.get(b"n"))

    t = threading.Thread(target=read)
    t.start()
    t.join(timeout=0.2)  # memory engine: blocked behind the writer; LMDB: reads its snapshot
    txn.abort()
    t.join()
    assert seen == [b"0"]


def test_closed_engine_refuses_transactions(kv):
    kv.close()
    with pytest.raises((StorageError, Exception)):
        kv.begin()


def test_first_finds_the_smallest_key_in_range(kv):
    with kv.begin(write=True) as txn:
        for k in (b"a", b"c", b"e"):
            txn.put(k, b"")
        assert txn.first(b"b", b"d") == b"c"  # inside a write transaction too
    with kv.begin() as txn:
        assert txn.first(b"a", None) == b"a"
        assert txn.first(b"d", b"e") is None
        assert txn.first(b"f", None) is None


def _by_scans(view, ranges):
    return [k for lo, hi in ranges for k, _ in view.scan(lo, hi)]


def test_keys_in_ranges_is_the_scans_keys_one_range_after_another(kv):
    _fill(kv, [b"a", b"ab", b"b", b"c", b"d", b"e", b"\xff"])
    ranges = [(b"b", b"d"), (b"a", b"b"), (b"x", b"y"), (b"\xfe", None), (b"c", b"c"), (b"\xff\x00", None)]
    with kv.begin() as txn:
        assert txn.keys_in_ranges(ranges) == _by_scans(txn, ranges) == [
            b"b", b"c", b"a", b"ab", b"\xff"]
        assert txn.keys_in_ranges([]) == []
    with kv.begin(write=True) as txn:   # a writer sees its own writes
        assert txn.keys_in_ranges(ranges) == _by_scans(txn, ranges)
        txn.put(b"bb", b"")
        txn.delete(b"c")
        assert txn.keys_in_ranges(ranges) == _by_scans(txn, ranges) == [
            b"b", b"bb", b"a", b"ab", b"\xff"]


def test_keys_in_ranges_of_an_older_snapshot(kv):
    _fill(kv, [b"a", b"b", b"c"])
    old = kv.begin()
    try:
        with kv.begin(write=True) as txn:
            txn.delete(b"b")
            txn.put(b"bb", b"")
        ranges = [(b"a", b"c"), (b"c", None)]
        assert old.keys_in_ranges(ranges) == _by_scans(old, ranges) == [b"a", b"b", b"c"]
        with kv.begin() as now:
            assert now.keys_in_ranges(ranges) == [b"a", b"bb", b"c"]
    finally:
        old.release()
