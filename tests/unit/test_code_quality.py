"""ruff (lint and import order) over the whole tree and mypy over storage, engine and commands run
with the test suite, so the house stays as tidy as it is (configuration: pyproject.toml)."""
from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(pathlib.Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (the test extra installs it)")
    return found


def test_ruff_finds_nothing():
    done = subprocess.run([_tool("ruff"), "check", "ginkgodb", "tests", "bench"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_mypy_finds_nothing():
    done = subprocess.run([_tool("mypy")], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
