"""The quick benchmark suite still runs, and ginkgodb answers every workload correctly.

This keeps bench/ from rotting as the engine changes: a workload whose answer check fails shows
up here as WRONG, an exception as error/unsupported, and an unstartable target as unavailable.
"""
from __future__ import annotations

import pytest

from bench.floors import FLOOR_IDS
from bench.results import NOT_APPLICABLE, OK
from bench.run import run
from bench.workloads import ordered_ids

pytestmark = pytest.mark.timeout(900)


def _quick(tmp_path, *targets: str, floors: bool = True) -> dict:
    argv = ["--quick", "--targets", ",".join(targets), "--no-install",
            "--json", str(tmp_path / "quick.json"), "--markdown", str(tmp_path / "quick.md")]
    return run(argv + ([] if floors else ["--no-floors"]))


def _failures(doc: dict, target: str) -> dict[str, str]:
    cells = {c["workload"]: c for c in doc["summary"] if c["target"] == target}
    assert sorted(cells, key=ordered_ids().index) == ordered_ids()
    return {w: f"{c['status']}: {c['detail']}" for w, c in cells.items()
            if c["status"] not in (OK, NOT_APPLICABLE)}


def test_quick_suite_on_embedded_in_memory_ginkgodb(tmp_path):
    doc = _quick(tmp_path, "ginkgo-memory")
    assert _failures(doc, "ginkgo-memory") == {}
    floors = {c["workload"]: c["status"] for c in doc["summary"] if c["target"] == "floors"}
    assert floors == dict.fromkeys(FLOOR_IDS, OK)
    assert (tmp_path / "quick.md").read_text().startswith("# ginkgodb benchmarks")


@pytest.mark.slow
def test_quick_suite_oracles_agree_with_mongomock(tmp_path):
    """An independent engine reaches the same answers, so the expectations themselves are right."""
    pytest.importorskip("mongomock")
    doc = _quick(tmp_path, "mongomock", floors=False)
    failures = _failures(doc, "mongomock")
    # mongomock has no sessions: the transaction workloads are honestly unsupported, not wrong
    for workload in ("W16", "W17"):
        assert failures.pop(workload, "unsupported: ").startswith("unsupported: "), workload
    assert failures == {}
