"""Fixtures of the robustness suite: a small tmpfs to fill up."""
from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest


@pytest.fixture
def small_tmpfs(tmp_path) -> Iterator[Callable[[int], Path]]:
    """`mount(size_mb)` -> a freshly mounted tmpfs of that size (unmounted afterwards); skips,
    saying why, where a tmpfs cannot be mounted (not root, no mount permission)."""
    mounted: list[Path] = []

    def mount(size_mb: int) -> Path:
        if os.geteuid() != 0:
            pytest.skip("disk-full tests mount a small tmpfs, which needs root")
        point = tmp_path / f"tmpfs{len(mounted)}"
        point.mkdir()
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_mb}m", "tmpfs", str(point)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip() or done.returncode}")
        mounted.append(point)
        return point

    yield mount
    for point in mounted:
        subprocess.run(["umount", "-l", str(point)], capture_output=True)
