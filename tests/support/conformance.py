"""The driver specifications' unified-test runner, as the conformance tests start it.

The spec files and their runner live in the shared folder beside the repository (or beside the
folder that holds its worktrees); they are not ours to ship.
"""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[2]
RUNNER = next((p / "shared" / "conformance" / "run_unified.py" for p in (ROOT.parent, ROOT.parent.parent)
               if (p / "shared" / "conformance" / "run_unified.py").exists()),
              ROOT.parent / "shared" / "conformance" / "run_unified.py")


def start(target_args: list[str], areas: str, out: pathlib.Path, *extra: str) -> subprocess.Popen:
    """The runner on `areas` (comma-separated), writing its JSON results to `out`."""
    cmd = [sys.executable, str(RUNNER), *target_args, "--area", areas, "--quiet", "--exit-zero",
           "--json", str(out), "--test-timeout", "30", *extra]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), *sys.path]))
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=ROOT)


def collect(proc: subprocess.Popen, out: pathlib.Path, timeout: float) -> dict[str, Any]:
    output, _ = proc.communicate(timeout=timeout)
    assert out.exists(), output[-3000:]
    return json.loads(out.read_text())


def run_unified(tmp_path: pathlib.Path, target_args: list[str], area: str, timeout: float = 600) -> dict[str, Any]:
    """One run of the runner on `area`, to completion."""
    out = tmp_path / "results.json"
    return collect(start(target_args, area, out), out, timeout)
