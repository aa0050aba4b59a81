"""Installing what the tests need (Debian packages, npm groups) on first use. Each install runs
under an exclusive file lock, so parallel pytest workers asking at once install it once (two
concurrent apt-get runs would fail on dpkg's lock; two `npm ci` into one folder corrupt it)."""
from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

APT_TIMEOUT = 900


@contextlib.contextmanager
def exclusive(name: str) -> Iterator[None]:
    """Hold the machine-wide lock `name` (a file in the temporary directory) while inside."""
    path = Path(tempfile.gettempdir()) / f"ginkgodb-tests-{name}.lock"
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _apt(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    return subprocess.run(["apt-get", *args], capture_output=True, text=True, env=env, timeout=APT_TIMEOUT)


def apt_install(packages: list[str], present: Callable[[], bool], needed_by: str) -> None:
    """Install Debian `packages` unless `present()`; skip the calling test with the reason when
    that is impossible (no apt-get, not root, no registry)."""
    with exclusive("apt"):
        if present():
            return
        wanted = " ".join(packages)
        if shutil.which("apt-get") is None:
            pytest.skip(f"{wanted} missing and no apt-get to install it ({needed_by} need it)")
        if os.geteuid() != 0:
            pytest.skip(f"{wanted} missing; installing it needs root (apt-get install {wanted})")
        try:
            done = _apt("install", "-y", "-q", *packages)
            if done.returncode != 0:   # a fresh machine has no package lists yet
                _apt("update", "-q")
                done = _apt("install", "-y", "-q", *packages)
        except subprocess.TimeoutExpired:
            pytest.skip(f"apt-get install {wanted} timed out")
        if done.returncode != 0 or not present():
            pytest.skip(f"apt-get install {wanted} failed: {done.stderr.strip()[-500:]}")
