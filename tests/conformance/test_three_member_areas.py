"""The session, transaction, retryable and change-stream areas of the driver specifications over
the wire against a 3-member replica set on etcd (`ginkgodb cluster start`), with the drivers'
own server selection, retry and pinning logic, as against mongod. The one-member figures are in
test_replica_set_areas.py; THRESHOLDS is this run's table of pass rates (of runnable tests)."""
from __future__ import annotations

import pytest
from support.conformance import RUNNER, collect, start
from support.etcd import ensure_etcd
from support.sockets import free_port_range

from ginkgodb import cluster

THRESHOLDS = {"transactions": 0.90, "transactions-convenient-api": 0.90, "sessions": 0.90,
              "retryable-writes": 0.90, "retryable-reads": 0.90, "causal-consistency": 0.90,
              "change-streams": 0.95}   # 66 / 66 in each of 3 runs

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not RUNNER.exists(), reason=f"spec-test runner not found at {RUNNER}")]


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict:
    ensure_etcd()
    tmp = tmp_path_factory.mktemp("three-members")
    state = cluster.start("rs0", 3, free_port_range(3), str(tmp / "rs"),
                          serve_args=["--setParameter", "enableTestCommands=1"])
    try:
        out = tmp / "results.json"
        proc = start(["--uri", cluster.connection_string(state)], ",".join(THRESHOLDS), out, "--top", "0")
        by_area: dict[str, list] = {}
        for f in collect(proc, out, timeout=1200)["files"]:
            by_area.setdefault(f["area"], []).extend(f["tests"])
        return by_area
    finally:
        cluster.stop(state["dir"])


@pytest.mark.parametrize("area", list(THRESHOLDS))
def test_area_conformance_on_three_members(results, area):
    tests = results.get(area, [])
    passed = sum(t["status"] == "pass" for t in tests)
    failed = [t for t in tests if t["status"] == "fail"]
    rate = passed / max(1, passed + len(failed))
    print(f"\n3 members {area}: {passed} passed, {len(failed)} failed ({rate:.1%} of runnable)")
    for t in failed[:10]:
        print("  FAIL", t.get("description", ""), "--", t.get("reason", "")[:160])
    assert passed and rate >= THRESHOLDS[area], f"{area} on 3 members: {rate:.1%} < {THRESHOLDS[area]:.0%}"
