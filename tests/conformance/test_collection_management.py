"""The collection-management spec area, embedded and over the wire: every runnable test must
pass (9 of 9, time-series collections included)."""
from __future__ import annotations

import pytest
from support.conformance import RUNNER, run_unified

AREA = "collection-management"
FLOOR = 1.0

pytestmark = pytest.mark.skipif(not RUNNER.exists(), reason=f"spec-test runner not found at {RUNNER}")


def _check(results: dict, label: str) -> None:
    passed = failed = 0
    blocking = []
    for f in results["files"]:
        if f["area"] != AREA:
            continue
        for t in f["tests"]:
            if t["status"] == "pass":
                passed += 1
            elif t["status"] == "fail":
                failed += 1
                blocking.append(f"{f['file']} :: {t['description']}: {t.get('reason', '')[:160]}")
    rate = passed / max(1, passed + failed)
    print(f"\n{label} {AREA}: {passed} passed, {failed} failed ({rate:.1%})")
    assert not blocking, "\n".join(blocking)
    assert rate >= FLOOR - 1e-9, f"{label} {AREA} {rate:.1%} < {FLOOR:.1%}"


def test_collection_management_embedded(tmp_path):
    _check(run_unified(tmp_path, ["--client-factory", "ginkgodb:MongoClient()"], AREA), "embedded")


def test_collection_management_over_the_wire(tmp_path):
    from ginkgodb.server.testing import running_server
    with running_server(None) as (host, port):
        results = run_unified(tmp_path, ["--uri", f"mongodb://{host}:{port}/?directConnection=true"], AREA)
    _check(results, "wire")
