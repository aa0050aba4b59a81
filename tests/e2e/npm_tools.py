"""The Node.js programs the end-to-end tests drive, installed from npm once into tests/e2e/.npm
(git-ignored): the `mongodb` driver and `mongosh` at its root, and each further group (Mongoose;
mongo-express with playwright-core) in a folder of its own so that their dependency trees (each
brings its own `mongodb` driver version) never disturb one another. Without node, npm or the
registry the tests that need them are skipped with the reason."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Optional

import pytest

CACHE = Path(__file__).resolve().parent / ".npm"
PACKAGES = {"mongodb": "7.9.0", "mongosh": "2.12.0"}  # the versions reference/wire.md verified
MONGOOSE = {"mongoose": "9.12.1"}
# mongo-express 1.0.1+ depend on a package fetched from a git host rather than the registry, so
# 1.0.0 is the newest release installable from npm alone.
GUI = {"mongo-express": "1.0.0", "playwright-core": "1.65.1"}
INSTALL_TIMEOUT = 600


def _installed_version(prefix: Path, name: str) -> Optional[str]:
    manifest = prefix / "node_modules" / name / "package.json"
    if not manifest.exists():
        return None
    return json.loads(manifest.read_text()).get("version")


def ensure_packages(packages: dict[str, str] = PACKAGES, group: Optional[str] = None) -> Path:
    """node_modules holding `packages` at their pinned versions, installing on first use; skips
    when impossible. `group` names the folder under .npm (None: .npm itself)."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip(f"node/npm not installed: the tests of {', '.join(packages)} need them")
    prefix = CACHE / group if group else CACHE
    missing = [f"{n}@{v}" for n, v in packages.items() if _installed_version(prefix, n) != v]
    if missing:
        prefix.mkdir(parents=True, exist_ok=True)
        try:
            done = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error",
                                   "--prefix", str(prefix), *missing],
                                  capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
        except subprocess.TimeoutExpired:
            pytest.skip(f"npm install {' '.join(missing)} timed out (registry unreachable?)")
        if done.returncode != 0:
            pytest.skip(f"npm install {' '.join(missing)} failed (registry unreachable?): "
                        f"{done.stderr.strip()[-500:]}")
    return prefix / "node_modules"


def mongosh_binary(modules: Path) -> Path:
    return modules / ".bin" / "mongosh"


SCRIPTS = Path(__file__).resolve().parent / "scripts"


def run_json_script(modules: Path, script: str, *args: str, timeout: float = 120) -> dict:
    """Run tests/e2e/scripts/`script` with `modules` on NODE_PATH; its last stdout line is JSON."""
    done = subprocess.run(["node", str(SCRIPTS / script), *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "NODE_PATH": str(modules)})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
