"""The driver specifications' unified CRUD tests, embedded and over the wire.

The spec files and their runner live in the shared folder beside the repository (they are not
ours to ship). Each run's figure is printed; the target is 90% of the runnable CRUD tests outside
the aggregation-only files (those belong to the aggregation work).
"""
from __future__ import annotations

import pytest
from support.conformance import RUNNER, run_unified

TARGET = 0.90

pytestmark = pytest.mark.skipif(not RUNNER.exists(), reason=f"spec-test runner not found at {RUNNER}")


def is_aggregation_file(name: str) -> bool:
    return name.startswith(("aggregate", "db-aggregate"))


def figure(results: dict, area: str = "crud") -> tuple[int, int, list[str]]:
    passed = failed = 0
    failures = []
    for f in results["files"]:
        if f["area"] != area or (area == "crud" and is_aggregation_file(f["file"])):
            continue
        for t in f["tests"]:
            if t["status"] == "pass":
                passed += 1
            elif t["status"] == "fail":
                failed += 1
                failures.append(f"{f['file']} :: {t['description']}: {t.get('reason', '')[:160]}")
    return passed, failed, failures


def _check(results: dict, label: str) -> None:
    passed, failed, failures = figure(results)
    rate = passed / max(1, passed + failed)
    print(f"\n{label}: {passed} passed, {failed} failed of runnable CRUD tests outside aggregation "
          f"({rate:.1%})")
    for line in failures:
        print("  FAIL", line)
    assert rate >= TARGET, f"{label} CRUD conformance {rate:.1%} < {TARGET:.0%}:\n" + "\n".join(failures)


def test_crud_conformance_embedded(tmp_path):
    _check(run_unified(tmp_path, ["--client-factory", "ginkgodb:MongoClient()"], "crud"), "embedded")


def test_crud_conformance_over_the_wire(tmp_path):
    from ginkgodb.server.testing import running_server
    with running_server(None) as (host, port):
        results = run_unified(tmp_path, ["--uri", f"mongodb://{host}:{port}/?directConnection=true"],
                              "crud,collection-management")
    passed, failed, _ = figure(results, "collection-management")
    print(f"\nwire collection-management: {passed} passed, {failed} failed")
    _check(results, "wire")


def test_gridfs_conformance_embedded(tmp_path):
    """pymongo's own gridfs on the embedded client: every runnable gridfs spec test passes, as
    over the wire."""
    results = run_unified(tmp_path, ["--client-factory", "ginkgodb:MongoClient()"], "gridfs")
    passed, failed, failures = figure(results, "gridfs")
    print(f"\nembedded gridfs: {passed} passed, {failed} failed")
    assert passed and not failed, "\n".join(failures)
