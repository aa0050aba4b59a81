"""The driver specifications' session, transaction, retryable and change-stream areas over the
wire against `ginkgodb serve --replSet rs0 --setParameter enableTestCommands=1` (after
replSetInitiate), and embedded.

Every run prints each area's figure and its most common failure reasons. THRESHOLDS is the one
table of pass rates the areas must keep: 90% of the runnable tests over the wire; embedded, most
tests need a replica set and are skipped (docs/compatibility.md has the figures and reasons).
"""
from __future__ import annotations

import collections
import contextlib
import subprocess

import pymongo
import pytest
from support.conformance import RUNNER, collect, start

from ginkgodb.server.testing import running_server

#: pass rate (of runnable tests) each area must reach, over the wire and embedded
THRESHOLDS = {
    #                                   wire  embedded
    "transactions":                    (0.90, 0.00),
    "transactions-convenient-api":     (0.90, 0.00),
    "sessions":                        (0.90, 0.90),
    "change-streams":                  (0.90, 0.00),
    "retryable-writes":                (0.90, 0.00),
    "retryable-reads":                 (0.90, 1.00),
    "causal-consistency":              (0.90, 0.00),
}
#: the URI's options (drivers' defaults otherwise: retryable writes and reads on)
URI_OPTIONS = "replicaSet=rs0"
#: areas run in parallel on two servers (the fail points of one server are process-wide)
GROUPS = (("retryable-reads", "sessions", "causal-consistency"),
          ("transactions", "transactions-convenient-api", "retryable-writes", "change-streams"))
TOP_REASONS = 8

pytestmark = pytest.mark.skipif(not RUNNER.exists(), reason=f"spec-test runner not found at {RUNNER}")


def _runner(target_args: list[str], areas: tuple[str, ...], out) -> subprocess.Popen:
    return start(target_args, ",".join(areas), out, "--top", "0")


def _collect(proc: subprocess.Popen, out) -> dict:
    return collect(proc, out, timeout=1200)


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict:
    """{"wire": {area: [tests]}, "embedded": {...}}: one run of every area."""
    tmp = tmp_path_factory.mktemp("replset-conformance")
    by_target: dict[str, dict[str, list]] = {"wire": collections.defaultdict(list),
                                             "embedded": collections.defaultdict(list)}
    with contextlib.ExitStack() as stack:
        procs = []
        for i, areas in enumerate(GROUPS):
            host, port = stack.enter_context(running_server(None, subprocess=True, quiet=True, replSet="rs0",
                                                            setParameter="enableTestCommands=1"))
            with pymongo.MongoClient(host, port, directConnection=True) as admin:
                admin.admin.command("replSetInitiate")
            out = tmp / f"wire{i}.json"
            procs.append(("wire", _runner(["--uri", f"mongodb://{host}:{port}/?{URI_OPTIONS}"], areas, out), out))
        out = tmp / "embedded.json"
        procs.append(("embedded", _runner(["--client-factory", "ginkgodb:MongoClient()"], tuple(THRESHOLDS), out),
                      out))
        for target, proc, out in procs:
            for f in _collect(proc, out)["files"]:
                by_target[target][f["area"]].extend(dict(t, file=f["file"]) for t in f["tests"])
    return by_target


def figure(tests: list) -> tuple[int, int, int, collections.Counter]:
    passed = sum(t["status"] == "pass" for t in tests)
    failed = [t for t in tests if t["status"] == "fail"]
    skipped = sum(t["status"] == "skipped" for t in tests)
    reasons = collections.Counter(_reason(t.get("reason", "")) for t in failed)
    return passed, len(failed), skipped, reasons


def _reason(text: str) -> str:
    """A failure reason without its per-test details (operation number, addresses, values)."""
    text = text.split(" -- ", 1)[-1]
    if text.startswith("op#"):
        text = text.split(" ", 1)[-1]
    return text[:140]


@pytest.mark.parametrize("target", ["wire", "embedded"])
@pytest.mark.parametrize("area", list(THRESHOLDS))
def test_area_conformance(results, area, target):
    passed, failed, skipped, reasons = figure(results[target][area])
    rate = passed / max(1, passed + failed)
    floor = THRESHOLDS[area][0 if target == "wire" else 1]
    print(f"\n{target} {area}: {passed} passed, {failed} failed, {skipped} skipped ({rate:.1%} of runnable; "
          f"floor {floor:.0%})")
    for reason, n in reasons.most_common(TOP_REASONS):
        print(f"  {n:4d} x {reason}")
    assert rate >= floor, f"{target} {area} conformance {rate:.1%} < {floor:.0%}"
