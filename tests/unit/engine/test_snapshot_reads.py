"""Point-in-time reads outside transactions (engine/snapshot_reads.py): a kept snapshot per
cluster time, the times no snapshot holds, and the 300 s history window."""
from __future__ import annotations

import pytest
from bson.timestamp import Timestamp

from ginkgodb.engine import snapshot_reads
from ginkgodb.errors import CommandError


def _count(view) -> int:
    return view.count("t", "c", {})


def test_a_snapshot_of_now_is_read_again_at_its_cluster_time(engine):
    engine.insert("t", "c", [{"_id": 1}, {"_id": 2}])
    at, view = engine.snapshot_reads.now()
    assert at == engine.oplog.last_ts
    engine.insert("t", "c", [{"_id": 3}])
    assert _count(engine.snapshot_reads.at(at)) == 2   # the kept snapshot, not now
    assert _count(engine) == 3
    later, _ = engine.snapshot_reads.now()
    assert later > at and _count(engine.snapshot_reads.at(later)) == 3


def test_nothing_written_since_shares_one_snapshot(engine):
    engine.insert("t", "c", [{"_id": 1}])
    a, first = engine.snapshot_reads.now()
    b, second = engine.snapshot_reads.now()
    assert a == b and first.txn is second.txn


def test_a_time_no_snapshot_holds(engine):
    engine.insert("t", "c", [{"_id": 1}])
    latest = engine.oplog.last_ts
    assert _count(engine.snapshot_reads.at(latest)) == 1   # nothing written since: it is now
    with pytest.raises(CommandError) as older:
        engine.snapshot_reads.at(Timestamp(latest.time - 1, 1))
    assert older.value.code == 239  # SnapshotTooOld
    with pytest.raises(CommandError) as newer:
        engine.snapshot_reads.at(Timestamp(latest.time + 100, 1))
    assert newer.value.code == 72 and "must not be greater than the current clusterTime" in newer.value.errmsg


def test_a_kept_snapshot_goes_after_the_history_window(engine, monkeypatch):
    engine.insert("t", "c", [{"_id": 1}])
    at, view = engine.snapshot_reads.now()
    engine.insert("t", "c", [{"_id": 2}])
    monkeypatch.setattr(snapshot_reads, "HISTORY_SECONDS", -1.0)
    with pytest.raises(CommandError) as gone:
        engine.snapshot_reads.at(at)
    assert gone.value.code == 239
    assert not view.txn.open  # its storage snapshot was released


def test_writes_through_a_snapshot_are_refused(engine):
    _, view = engine.snapshot_reads.now()
    with pytest.raises(CommandError) as refused:
        view.insert("t", "c", [{"_id": 1}])
    assert refused.value.code == 72
    assert _count(engine) == 0
