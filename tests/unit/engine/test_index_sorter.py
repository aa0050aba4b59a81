"""The index build's sorter: bounded runs spilled to files and merged, and builds that spill."""
from __future__ import annotations

import random

import pytest
from support.runner import Runner

from ginkgodb.engine import index_sorter
from ginkgodb.engine.index_sorter import EntrySorter


def test_entries_come_back_sorted_across_spilled_runs_with_duplicates_kept():
    rng = random.Random(7)
    entries = [bytes(rng.randrange(256) for _ in range(rng.randrange(0, 40))) for _ in range(5_000)]
    entries += entries[:50]
    with EntrySorter(run_entries=300) as sorter:
        for start in range(0, len(entries), 7):
            sorter.extend(entries[start:start + 7])
        assert len(sorter._files) > 10 and sorter.count == len(entries)
        assert list(sorter.sorted_entries()) == sorted(entries)


def test_a_run_larger_than_a_read_block_is_read_back_whole(monkeypatch):
    monkeypatch.setattr(index_sorter, "READ_BLOCK", 5)   # every entry straddles blocks
    entries = [b"k%03d" % i * (i % 9) for i in range(400)]
    with EntrySorter(run_entries=64) as sorter:
        sorter.extend(entries)
        assert list(sorter.sorted_entries()) == sorted(entries)


def test_entries_that_fit_one_run_are_sorted_in_memory_without_a_file():
    with EntrySorter(run_entries=10) as sorter:
        sorter.extend([b"b", b"a", b"c"])
        assert list(sorter.sorted_entries()) == [b"a", b"b", b"c"] and sorter._files == []


@pytest.fixture
def spills(monkeypatch):
    """Builds spill a run every 16 entries; the list counts the runs spilled."""
    monkeypatch.setattr(index_sorter, "RUN_ENTRIES", 16)
    counted: list[int] = []
    spill = EntrySorter._spill

    def counting(self):
        counted.append(len(self._run))
        spill(self)

    monkeypatch.setattr(EntrySorter, "_spill", counting)
    return counted


@pytest.fixture
def run(engine, spills):
    return Runner(engine)


def _create(run, key, **options):
    return run.raw({"createIndexes": "c", "indexes": [{"key": key, "name": "ix", **options}]})


def test_a_spilled_build_indexes_every_document_in_key_order(run, spills):
    run.insert("c", *({"_id": i, "n": (i * 37) % 200, "tags": [i % 5, i % 7]} for i in range(200)))
    assert _create(run, {"n": 1})["ok"] == 1.0
    assert len(spills) == 13
    assert [d["n"] for d in run.find("c", {"n": {"$gte": 0}}, hint="ix")] == list(range(200))
    run.raw({"dropIndexes": "c", "index": "ix"})
    assert _create(run, {"tags": 1})["ok"] == 1.0
    assert len(run.find("c", {"tags": 3}, hint="ix")) == len([i for i in range(200) if 3 in (i % 5, i % 7)])


def test_a_spilled_unique_build_over_a_duplicate_fails_and_leaves_nothing(run, spills):
    run.insert("c", *({"_id": i, "u": i} for i in range(100)), {"_id": 100, "u": 63})
    err = _create(run, {"u": 1}, unique=True)
    assert spills
    assert err["ok"] == 0.0 and err["code"] == 11000
    assert err["errmsg"].endswith("index: ix dup key: { u: 63 }")
    names = [ix["name"] for ix in run({"listIndexes": "c"})["cursor"]["firstBatch"]]
    assert names == ["_id_"]
    assert _create(run, {"u": 1})["ok"] == 1.0 and len(run.find("c", {"u": 63}, hint="ix")) == 2


def test_a_spilled_build_over_a_key_too_large_fails_and_leaves_nothing(run, spills):
    run.insert("c", *({"_id": i, "s": f"v{i:03d}"} for i in range(60)), {"_id": 60, "s": "z" * 600})
    err = _create(run, {"s": 1})
    assert err["ok"] == 0.0 and err["codeName"] == "OBSOLETE_KeyTooLong" and "too large to index" in err["errmsg"]
    assert spills
    names = [ix["name"] for ix in run({"listIndexes": "c"})["cursor"]["firstBatch"]]
    assert names == ["_id_"]
