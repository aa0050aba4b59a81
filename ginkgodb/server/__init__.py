"""The wire-protocol server: asyncio around `ginkgodb.wire` and `commands.dispatch`.

`run(config)` serves until SIGINT/SIGTERM; `testing.running_server()` starts one for tests.
"""
from __future__ import annotations

from .config import ServerConfig

__all__ = ["ServerConfig", "run"]


def run(config: ServerConfig) -> int:
    """Serve until stopped; returns the process exit code (see `main.run`)."""
    from .main import run as _run
    return _run(config)
