"""The loop the standalone benchmark modules share: each target in turn, peers installed when
missing, a failing or unavailable target reported as an error row rather than stopping the run."""
from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, Optional

from .install import ensure_installed
from .targets import TARGETS


def measure_each(targets: str, measure: Callable[[str], dict[str, Any]]) -> Optional[list[dict[str, Any]]]:
    """`measure(name)` for each comma-separated target, one JSON line printed per result; None
    (after saying why) when a name is not a target."""
    results: list[dict[str, Any]] = []
    for name in targets.split(","):
        if name not in TARGETS:
            print(f"unknown target {name}", file=sys.stderr)
            return None
        why = ensure_installed(TARGETS[name].requires)
        if why is not None:
            results.append({"target": name, "error": why})
        else:
            try:
                results.append(measure(name))
            except Exception as exc:  # an unavailable peer is reported, not fatal
                results.append({"target": name, "error": f"{type(exc).__name__}: {exc}"})
        print(json.dumps(results[-1]), flush=True)
    return results


def save(results: list[dict[str, Any]], path: Optional[str]) -> None:
    if path:
        with open(path, "w") as f:
            json.dump(results, f, indent=1)
