"""Instructions a child Python process executes, counted by valgrind's cachegrind: the one runner
the instruction-count benchmarks share (figures that do not move with the machine's load)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import Optional

_IREFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def instructions(module: str, args: Sequence[str], env: Optional[Mapping[str, str]] = None) -> int:
    """Instructions of `python -m module *args` under cachegrind. PYTHONHASHSEED is fixed (unless
    `env` sets it), so every run hashes alike and does the same work."""
    cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
           sys.executable, "-m", module, *args]
    child_env = {**os.environ, "PYTHONHASHSEED": "0", **(env or {})}
    out = subprocess.run(cmd, capture_output=True, text=True, env=child_env, check=False)
    found = _IREFS.search(out.stderr)
    if out.returncode != 0 or found is None:
        raise RuntimeError(f"valgrind run failed: {out.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))
