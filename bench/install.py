"""Install missing peers with pip on first use, and say so; never drop a target silently."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections.abc import Iterable


def missing_modules(requires: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(mod, pip) for mod, pip in requires if importlib.util.find_spec(mod) is None]


def ensure_installed(requires: Iterable[tuple[str, str]], allow_install: bool = True) -> str | None:
    """Make the modules importable; return None on success or the reason they are unavailable."""
    missing = missing_modules(requires)
    if not missing:
        return None
    packages = sorted({pip for _mod, pip in missing})
    if not allow_install:
        return f"not installed: {', '.join(packages)} (run without --no-install to pip install)"
    print(f"[bench] installing {' '.join(packages)} with pip ...", file=sys.stderr, flush=True)
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", *packages],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        return f"pip install {' '.join(packages)} failed: {tail[0]}"
    importlib.invalidate_caches()
    still = missing_modules(missing)
    if still:
        return f"installed {' '.join(packages)} but cannot import {', '.join(m for m, _ in still)}"
    return None
