"""What a result file records about where it was measured, so numbers are never context-free."""
from __future__ import annotations

import datetime as dt
import importlib.metadata
import os
import platform
import subprocess
import sys
from typing import Any

PACKAGES = ("pymongo", "lmdb", "mongomock", "montydb", "mongita", "secantusdb")


def repo_root() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def describe(args: dict[str, Any]) -> dict[str, Any]:
    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": _git_commit(),
        "python": sys.version.split()[0],
        "platform": platform.platform(terse=True),
        "cpus": os.cpu_count(),
        "versions": {p: _version(p) for p in PACKAGES},
        "args": args,
    }


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def _git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=repo_root(),
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None
