"""Snapshots see exactly what was committed when they were taken, on both engines; KeyBatch is a
value that reads back over a snapshot and applies in one transaction."""
from __future__ import annotations

import threading

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.engines import ENGINES, make_kv

from ginkgodb.storage import KeyBatch


def _put(kv, **pairs):
    with kv.writer() as txn:
        for k, v in pairs.items():
            if v is None:
                txn.delete(k.encode())
            else:
                txn.put(k.encode(), v.encode())


def test_snapshot_ignores_later_commits(kv):
    _put(kv, a="1", b="1", c="1")
    snap = kv.snapshot()
    _put(kv, a="2", b=None, d="2")
    assert snap.get(b"a") == b"1" and snap.get(b"b") == b"1" and snap.get(b"d") is None
    assert list(snap.scan(b"", None)) == [(b"a", b"1"), (b"b", b"1"), (b"c", b"1")]
    assert list(snap.scan(b"", None, reverse=True)) == [(b"c", b"1"), (b"b", b"1"), (b"a", b"1")]
    assert snap.first(b"b", None) == b"b"
    snap.release()
    with kv.snapshot() as now:
        assert list(now.scan(b"", None)) == [(b"a", b"2"), (b"c", b"1"), (b"d", b"2")]


def test_reader_does_not_wait_for_an_open_writer(kv):
    _put(kv, n="0")
    txn = kv.writer()
    txn.put(b"n", b"uncommitted")
    assert txn.get(b"n") == b"uncommitted"  # the writer reads its own writes
    seen = []

    def read():
        with kv.snapshot() as r:
            seen.append(r.get(b"n"))

    t = threading.Thread(target=read)
    t.start()
    t.join(timeout=5)
    assert seen == [b"0"], "a reader waited for (or saw) an uncommitted write"
    txn.commit()
    with kv.snapshot() as r:
        assert r.get(b"n") == b"uncommitted"


def test_long_scans_of_an_old_snapshot_cross_chunks(kv):
    _put(kv, **{f"k{i:04d}": "old" for i in range(1000)})
    snap = kv.snapshot()
    _put(kv, **{f"k{i:04d}": None for i in range(0, 1000, 2)}, **{f"k{i:04d}x": "new" for i in range(500)})
    got = list(snap.scan(b"k", b"l"))
    assert len(got) == 1000 and all(v == b"old" for _, v in got)
    assert [k for k, _ in snap.scan(b"k", b"l", reverse=True)] == [k for k, _ in reversed(got)]
    snap.release()


def test_key_batch_reads_over_a_snapshot_and_applies_atomically(kv):
    _put(kv, a="1", b="1", c="1")
    batch = KeyBatch()
    with kv.snapshot() as snap:
        view = batch.overlay(snap)
        view.put(b"b", b"2")
        view.delete(b"c")
        view.put(b"d", b"2")
        assert view.get(b"b") == b"2" and view.get(b"c") is None and view.get(b"a") == b"1"
        assert list(view.scan(b"", None)) == [(b"a", b"1"), (b"b", b"2"), (b"d", b"2")]
        assert list(view.scan(b"", None, reverse=True)) == [(b"d", b"2"), (b"b", b"2"), (b"a", b"1")]
        assert view.first(b"c", None) == b"d"
    with kv.snapshot() as snap:  # nothing applied yet
        assert snap.get(b"b") == b"1" and snap.get(b"d") is None
    with kv.writer() as txn:
        txn.apply(batch)
    with kv.snapshot() as snap:
        assert list(snap.scan(b"", None)) == [(b"a", b"1"), (b"b", b"2"), (b"d", b"2")]


def test_key_batch_first_probes_the_snapshot_or_merges(kv):
    """`first` over a batch: the snapshot's key where the batch holds none in the range, the
    merged answer (a deleted key skipped, a new key found) where it does."""
    _put(kv, a="1", c="1", e="1")
    batch = KeyBatch()
    with kv.snapshot() as snap:
        view = batch.overlay(snap)
        assert view.first(b"b", None) == b"c" and view.first(b"f", None) is None
        view.delete(b"c")
        view.put(b"bb", b"2")
        assert view.first(b"b", None) == b"bb" and view.first(b"b", b"bb") is None
        assert view.first(b"c", None) == b"e" and view.first(b"c", b"e") is None
        assert view.first(b"d", b"f") == b"e" and view.first(b"", b"b") == b"a"
        for lo, hi in [(b"", None), (b"b", b"d"), (b"bc", b"e"), (b"f", None)]:
            assert view.first(lo, hi) == next((k for k, _ in view.scan(lo, hi)), None)


_KEYS = st.sampled_from([b"a", b"b", b"c", b"d", b"e", b"f"])
_OPS = st.lists(st.one_of(
    st.tuples(st.just("put"), _KEYS, st.binary(min_size=1, max_size=3)),
    st.tuples(st.just("del"), _KEYS, st.none()),
    st.tuples(st.just("commit"), st.none(), st.none()),
    st.tuples(st.just("snap"), st.none(), st.none()),
    st.tuples(st.just("release"), st.integers(0, 5), st.none()),
), max_size=40)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=_OPS)
def test_every_snapshot_reads_its_commit_exactly(tmp_path_factory, ops):
    for kind in ENGINES:
        kv = make_kv(kind, tmp_path_factory.mktemp(kind))
        try:
            _check_history(kv, ops)
        finally:
            kv.close()


def _check_history(kv, ops):
    committed: dict = {}
    pending: dict = {}
    snaps: list = []
    txn = None
    for op, key, value in ops:
        if op in ("put", "del"):
            if txn is None:
                txn = kv.writer()
            if op == "put":
                txn.put(key, value)
                pending[key] = value
            else:
                txn.delete(key)
                pending[key] = None
        elif op == "commit" and txn is not None:
            txn.commit()
            txn = None
            for k, v in pending.items():
                if v is None:
                    committed.pop(k, None)
                else:
                    committed[k] = v
            pending = {}
        elif op == "snap":
            snaps.append((kv.snapshot(), dict(committed)))
        elif op == "release" and snaps:
            snap, _ = snaps.pop(key % len(snaps))
            snap.release()
        for snap, expected in snaps:
            assert dict(snap.scan(b"", None)) == expected
            assert [k for k, _ in snap.scan(b"", None, reverse=True)] == sorted(expected, reverse=True)
            for k in (b"a", b"c", b"f"):
                assert snap.get(k) == expected.get(k)
    if txn is not None:
        txn.abort()
    for snap, expected in snaps:
        assert dict(snap.scan(b"", None)) == expected
        snap.release()


def test_key_batch_keeps_its_key_order_once_a_range_was_read():
    """The order is made at the first range read and follows every later write (a new key
    once, however often it is written)."""
    batch = KeyBatch()
    batch.put(b"c", b"1")
    batch.put(b"a", b"1")
    assert list(batch.items()) == [(b"a", b"1"), (b"c", b"1")]
    assert list(batch.keys_in(b"b", None)) == [b"c"]
    batch.delete(b"b")
    batch.put(b"c", b"2")
    batch.put_many([(b"d", b"1"), (b"d", b"2"), (b"a", b"3")])
    assert list(batch.keys_in(b"", None)) == [b"a", b"b", b"c", b"d"]
    assert list(batch.keys_in(b"", b"c", reverse=True)) == [b"b", b"a"]
    assert list(batch.items()) == [(b"a", b"3"), (b"b", None), (b"c", b"2"), (b"d", b"2")]
    batch.clear()
    batch.put(b"z", b"1")
    assert list(batch.keys_in(b"", None)) == [b"z"] and len(batch) == 1


def test_key_batch_knows_whether_a_range_holds_its_writes():
    for n in (3, 40):   # looked through, and ordered
        batch = KeyBatch()
        for i in range(n):
            batch.put(b"k%03d" % (2 * i), b"1")
        assert batch.holds_key_in(b"k000", b"k001") and batch.holds_key_in(b"k", None)
        assert not batch.holds_key_in(b"k001", b"k002") and not batch.holds_key_in(b"l", None)
        assert not batch.holds_key_in(b"a", b"k000")
