"""What the diagnostic commands may ask of `ctx.server`, and hello's session timeout.

`ctx.server` is None for the embedded client: every command here must answer without it (with
process-level facts and empty tables), because the embedded client calls ping, buildInfo and
hello too. The wire server's shared state implements ServerView.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Optional, Protocol

from ..bsonutil.types import is_number_instance as is_number  # noqa: F401  (the commands' check)

LOGICAL_SESSION_TIMEOUT_MINUTES = 30

#: when this process started serving (for uptime when there is no server)
PROCESS_START = time.time()


@dataclass
class OpInfo:
    """One in-flight operation, as the server's op table records it (for currentOp/killOp)."""

    opid: int
    connection_id: int
    client: Optional[str]
    command: Any                      # the command document (may hold RawBSONDocument values)
    ctx: Any                          # its CommandContext: killOp sets ctx.killed
    started: float = field(default_factory=time.monotonic)
    started_wall: float = field(default_factory=time.time)
    client_metadata: Optional[dict] = None

    @property
    def name(self) -> str:
        return next(iter(self.command), "")


class ServerView(Protocol):
    """The read-only server facts and the two actions (kill an op, read a log) commands use."""

    started: float                    # time.time() at startup
    host: str                         # "hostname:port" as serverStatus reports it
    compressors: tuple[str, ...]      # what hello may agree to
    argv: list[str]
    parsed_options: dict[str, Any]

    def connection_stats(self) -> dict[str, Any]: ...
    def opcounters(self) -> dict[str, int]: ...
    def network_stats(self) -> dict[str, int]: ...
    def in_progress(self) -> list[OpInfo]: ...
    def kill_op(self, opid: int) -> bool: ...
    def log_lines(self, name: str) -> Optional[list[str]]: ...
    def request_shutdown(self, timeout_secs: float) -> None:
        """Stop the server cleanly: in-flight operations get `timeout_secs` to finish."""
