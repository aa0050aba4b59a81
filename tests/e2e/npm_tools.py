"""The Node.js programs the end-to-end tests drive, installed from npm once into tests/e2e/.npm
(git-ignored). Each group is installed with `npm ci` from the lock file kept in
tests/e2e/npm-locks/<group>/, so every machine gets the same dependency tree: a fresh resolution
can pick a release whose own dependencies the registry does not serve, and then fails. The
drivers (`mongodb`, `mongosh`) live at .npm itself; every further group (Mongoose; mongo-express
with playwright-core) in a folder of its own, so that their `mongodb` driver versions never
disturb one another. Without node, npm or the registry the tests that need them are skipped with
the reason.

To move a group to newer versions: `npm install --prefix <dir> <name>@<version> ...` in an empty
folder, then copy its package.json and package-lock.json into npm-locks/<group>/."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Optional

import pytest
from support.installing import exclusive

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".npm"
LOCKS = HERE / "npm-locks"
SCRIPTS = HERE / "scripts"
DRIVERS = "drivers"            # mongodb 7.9.0 and mongosh 2.12.0, the versions reference/wire.md verified
MONGOOSE = "mongoose"          # mongoose 9.12.1
GUI = "mongo-express"          # mongo-express 1.0.0 (later releases depend on a package fetched
                               # from a git host, not the registry) and playwright-core 1.65.1
INSTALL_TIMEOUT = 600


def pinned(group: str) -> dict[str, str]:
    """The group's top-level packages and the versions its lock file pins."""
    lock = json.loads((LOCKS / group / "package-lock.json").read_text())
    return {name: lock["packages"][f"node_modules/{name}"]["version"]
            for name in lock["packages"][""]["dependencies"]}


def _installed_version(prefix: Path, name: str) -> Optional[str]:
    manifest = prefix / "node_modules" / name / "package.json"
    if not manifest.exists():
        return None
    return json.loads(manifest.read_text()).get("version")


def ensure_packages(group: str = DRIVERS) -> Path:
    """node_modules of `group`, installed from its lock file on first use; skips when impossible."""
    packages = pinned(group)
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip(f"node/npm not installed: the tests of {', '.join(packages)} need them")
    prefix = CACHE if group == DRIVERS else CACHE / group
    with exclusive(f"npm-{group}"):
        _install(group, prefix, packages)
    return prefix / "node_modules"


def _install(group: str, prefix: Path, packages: dict[str, str]) -> None:
    if any(_installed_version(prefix, n) != v for n, v in packages.items()):
        prefix.mkdir(parents=True, exist_ok=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(LOCKS / group / name, prefix / name)
        wanted = " ".join(f"{n}@{v}" for n, v in packages.items())
        try:
            done = subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error",
                                   "--prefix", str(prefix)],
                                  capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
        except subprocess.TimeoutExpired:
            pytest.skip(f"npm ci of {wanted} timed out (registry unreachable?)")
        if done.returncode != 0:
            pytest.skip(f"npm ci of {wanted} failed (registry unreachable?): "
                        f"{done.stderr.strip()[-500:]}")


def mongosh_binary(modules: Path) -> Path:
    return modules / ".bin" / "mongosh"


def run_json_script(modules: Path, script: str, *args: str, timeout: float = 120) -> dict:
    """Run tests/e2e/scripts/`script` with `modules` on NODE_PATH; its last stdout line is JSON."""
    done = subprocess.run(["node", str(SCRIPTS / script), *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "NODE_PATH": str(modules)})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
