"""The driver specifications' change-stream tests, embedded and over the wire.

ginkgodb serves change streams without a replica set, so the runner is told the target is one
(`--topology replicaset`: most of the area asks for it). The figure is printed; the target is 90%
of the runnable tests. Tests that need fail points skip until the target offers configureFailPoint.
"""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
#: the shared folder beside the repository (or beside the folder that holds its worktree)
RUNNER = next((p / "shared" / "conformance" / "run_unified.py" for p in ROOT.parents
               if (p / "shared" / "conformance" / "run_unified.py").exists()),
              ROOT.parent / "shared" / "conformance" / "run_unified.py")
TARGET = 0.90
AREA = "change-streams"

pytestmark = [pytest.mark.skipif(not RUNNER.exists(), reason="spec-test runner (shared/conformance) not found"),
              pytest.mark.slow]


def run_unified(tmp_path, target_args: list[str], area: str) -> dict:
    out = tmp_path / "results.json"
    cmd = [sys.executable, str(RUNNER), *target_args, "--area", area, "--quiet", "--exit-zero",
           "--json", str(out), "--test-timeout", "30"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), *sys.path]))
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900, cwd=ROOT)
    assert out.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(out.read_text())


def _check(results: dict, label: str) -> None:
    passed = failed = skipped = 0
    failures = []
    for f in results["files"]:
        if f["area"] != AREA:
            continue
        for t in f["tests"]:
            if t["status"] == "pass":
                passed += 1
            elif t["status"] == "fail":
                failed += 1
                failures.append(f"{f['file']} :: {t['description']}: {t.get('reason', '')[:160]}")
            else:
                skipped += 1
    rate = passed / max(1, passed + failed)
    print(f"\n{label} change-streams: {passed} passed, {failed} failed, {skipped} skipped ({rate:.1%})")
    for line in failures:
        print("  FAIL", line)
    assert passed and rate >= TARGET, f"{label} change-stream conformance {rate:.1%}:\n" + "\n".join(failures)


def test_change_streams_embedded(tmp_path):
    _check(run_unified(tmp_path, ["--client-factory", "ginkgodb:MongoClient()", "--topology", "replicaset"], AREA),
           "embedded")


def test_change_streams_over_the_wire(tmp_path):
    from ginkgodb.server.testing import running_server
    with running_server(None) as (host, port):
        results = run_unified(tmp_path, ["--uri", f"mongodb://{host}:{port}/?directConnection=true",
                                         "--topology", "replicaset"], AREA)
    _check(results, "wire")
