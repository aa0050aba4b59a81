"""The Node.js clients the end-to-end tests drive: `mongodb` (driver) and `mongosh`, installed
from npm once into tests/e2e/.npm (git-ignored). Without node, npm or the registry the tests
that need them are skipped with the reason."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Optional

import pytest

CACHE = Path(__file__).resolve().parent / ".npm"
PACKAGES = {"mongodb": "7.9.0", "mongosh": "2.12.0"}  # the versions reference/wire.md verified
INSTALL_TIMEOUT = 600


def _installed_version(name: str) -> Optional[str]:
    manifest = CACHE / "node_modules" / name / "package.json"
    if not manifest.exists():
        return None
    import json
    return json.loads(manifest.read_text()).get("version")


def ensure_packages() -> Path:
    """node_modules with both packages, installing them on first use; skips when impossible."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node/npm not installed: the Node.js driver and mongosh tests need them")
    missing = [f"{n}@{v}" for n, v in PACKAGES.items() if _installed_version(n) != v]
    if missing:
        CACHE.mkdir(exist_ok=True)
        try:
            done = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error",
                                   "--prefix", str(CACHE), *missing],
                                  capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
        except subprocess.TimeoutExpired:
            pytest.skip(f"npm install {' '.join(missing)} timed out (registry unreachable?)")
        if done.returncode != 0:
            pytest.skip(f"npm install {' '.join(missing)} failed (registry unreachable?): "
                        f"{done.stderr.strip()[-500:]}")
    return CACHE / "node_modules"


def mongosh_binary(modules: Path) -> Path:
    return modules / ".bin" / "mongosh"
