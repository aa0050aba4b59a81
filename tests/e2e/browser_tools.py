"""Debian's headless Chromium for the browser tests: installed with apt-get on first use when the
tests run as root, otherwise the tests are skipped with the reason."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")  # the path the browser scripts launch
APT_PACKAGES = ["chromium", "chromium-driver"]
APT_TIMEOUT = 900


def _apt(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    return subprocess.run(["apt-get", *args], capture_output=True, text=True, env=env,
                          timeout=APT_TIMEOUT)


def ensure_chromium() -> Path:
    """The Chromium executable, installing Debian's package when missing and possible."""
    if CHROMIUM.exists():
        return CHROMIUM
    if shutil.which("apt-get") is None:
        pytest.skip(f"{CHROMIUM} missing and no apt-get to install it")
    if os.geteuid() != 0:
        pytest.skip(f"{CHROMIUM} missing; installing it needs root "
                    f"(apt-get install {' '.join(APT_PACKAGES)})")
    try:
        done = _apt("install", "-y", "-q", *APT_PACKAGES)
        if done.returncode != 0:  # a fresh machine has no package lists yet
            _apt("update", "-q")
            done = _apt("install", "-y", "-q", *APT_PACKAGES)
    except subprocess.TimeoutExpired:
        pytest.skip(f"apt-get install {' '.join(APT_PACKAGES)} timed out")
    if done.returncode != 0 or not CHROMIUM.exists():
        pytest.skip(f"apt-get install {' '.join(APT_PACKAGES)} failed: {done.stderr.strip()[-500:]}")
    return CHROMIUM
