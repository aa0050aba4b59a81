"""The benchmark harness's own correctness: data set, oracles, outcome handling, floors server."""
from __future__ import annotations

import bson
import pymongo
import pytest

from bench.documents import Dataset
from bench.queries import compute_expectations, scan_predicate
from bench.results import ERROR, OK, TIMEOUT, UNSUPPORTED, WRONG, Result
from bench.summary import summarize
from bench.targets.server_process import ServerProcess, python_argv
from bench.timing import HardTimeout, hard_deadline, measure
from bench.workloads.runner import classify


def test_rank_is_a_permutation_and_invertible():
    ds = Dataset(1_003, seed=7)
    ranks = [ds.rank(i) for i in range(ds.n)]
    assert sorted(ranks) == list(range(ds.n))
    assert all(ds.position_of_rank(r) == i for i, r in enumerate(ranks))


def test_k_counts_match_the_generated_documents():
    ds = Dataset(995)
    ks = [ds.doc(i)["k"] for i in range(ds.n)]
    for lo, hi in ((0, 1), (5, 17), (95, 100), (99, 120)):
        assert ds.count_k_between(lo, hi) == sum(lo <= k < hi for k in ks)


def test_documents_are_deterministic_and_bson_exact():
    a, b = Dataset(100, seed=3), Dataset(100, seed=3)
    doc = a.doc(42)
    assert doc == b.doc(42)
    assert bson.decode(bson.encode(doc)) == doc  # datetimes are millisecond-exact
    assert 450 <= len(bson.encode(doc)) <= 750


def test_expectations_agree_with_a_direct_count():
    ds = Dataset(2_000)
    docs = list(ds.docs())
    exp = compute_expectations(ds)
    assert exp.scan_count == sum(map(scan_predicate, docs)) > 0
    active = [d for d in docs if d["status"] == "active"]
    assert sum(g[3] for g in exp.groups) == len(active)
    assert [g[1] for g in exp.groups] == sorted((g[1] for g in exp.groups), reverse=True)


def test_measure_stops_at_the_operation_limit_or_the_budget():
    assert measure(lambda j: 2, 5, budget=60).units == 10
    assert measure(lambda j: 1, 10**9, budget=0.05).ops >= 1


def test_hard_deadline_interrupts_a_runaway_operation():
    with pytest.raises(HardTimeout):
        with hard_deadline(0.05):
            while True:
                pass


@pytest.mark.parametrize("exc, status", [
    (NotImplementedError("aggregate"), UNSUPPORTED),
    (pymongo.errors.OperationFailure("no such command", code=59), UNSUPPORTED),
    (pymongo.errors.OperationFailure("Unrecognized pipeline stage name: '$lookup'", code=40324), UNSUPPORTED),
    (ValueError("boom"), ERROR),
    (HardTimeout("exceeded 90 s"), TIMEOUT),
])
def test_exceptions_are_classified(exc, status):
    assert classify(exc)[0] == status


def test_one_wrong_run_makes_the_cell_wrong():
    runs = [Result("t", "W4", 10, OK, rate=r, repeat=i) for i, r in enumerate((10.0, 30.0))]
    runs.append(Result("t", "W4", 10, WRONG, rate=1000.0, detail="bad", repeat=2))
    cell = summarize(runs)[("t", "W4", 10)]
    assert cell.status == WRONG and cell.detail == "bad"


def test_median_of_successful_runs():
    runs = [Result("t", "W4", 10, OK, rate=r) for r in (10.0, 30.0, 20.0)]
    runs.append(Result("t", "W4", 10, TIMEOUT, detail="slow"))
    cell = summarize(runs)[("t", "W4", 10)]
    assert (cell.status, cell.rate) == (OK, 20.0)
    assert "1 of 4 runs timeout" in cell.detail


def test_ping_floor_server_answers_pymongo(tmp_path):
    server = ServerProcess(lambda port: python_argv("-m", "bench.ping_server", "--port", str(port)),
                           str(tmp_path / "log"), str(tmp_path))
    client = server.start()
    try:
        assert client.admin.command("ping")["ok"] == 1.0
    finally:
        client.close()
        server.stop()


def test_markdown_flags_wrong_answers_and_explains_every_gap():
    from bench.markdown import render
    results = [Result("ginkgo-memory", "W4", 10, OK, rate=100.0, unit="ops/s"),
               Result("mongomock", "W4", 10, WRONG, rate=900.0, unit="ops/s", detail="sku mismatch"),
               Result("ginkgo-memory", "W10", 10, OK, rate=5.0, unit="docs/s"),
               Result("mongomock", "W10", 10, UNSUPPORTED, unit="docs/s", detail="NotImplementedError: x")]
    meta = {"date": "d", "python": "3", "cpus": 2, "platform": "p", "args": {"repeat": 1}}
    text = render(meta, summarize(results), [], ["ginkgo-memory", "mongomock"], 10)
    assert "**WRONG** (900) [1]" in text and "unsupported [2]" in text
    assert "1. `mongomock`: sku mismatch" in text and "(peer WRONG)" in text
