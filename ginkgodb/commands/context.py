"""What a command handler may use besides its command document."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Optional

from ..errors import CommandError, ErrorCode


@dataclass
class CommandContext:
    """Per-connection (or per embedded client) state handed to every command.

    `engine` is the ginkgodb.engine.Engine; `server` is the wire server's shared state (None when
    embedded); `connection_id` numbers connections as mongod does (1 for the embedded client).
    `deadline` (monotonic seconds, from maxTimeMS) and `killed` let long operations stop early:
    the engine calls `check_interrupt()` as it scans. `javascript_enabled` is the front end's
    server-side JavaScript switch (mongod's security.javascriptEnabled, `--noscripting`).
    """

    engine: Any
    connection_id: int = 1
    client_address: Optional[str] = None
    server: Any = None
    client_metadata: Optional[dict] = None
    deadline: Optional[float] = None
    killed: bool = False
    javascript_enabled: bool = True
    extra: dict = field(default_factory=dict)
    #: while a command runs: the session scope it belongs to (commands/transactions.py) and the
    #: engine itself (`engine` is then the view of that scope: a transaction's, say)
    transaction: Any = None
    base_engine: Any = None
    profiling: Any = None   # the profiler's OpRecord while this command is profiled (profiler.py)
    #: the connection's authentication state (auth_state.AuthSession); None: a trusted caller
    #: (the embedded client), on which nothing is checked
    auth: Any = None

    def check_interrupt(self) -> None:
        if self.killed:
            raise CommandError(ErrorCode.Interrupted, "operation was interrupted")
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise CommandError(ErrorCode.MaxTimeMSExpired, "operation exceeded time limit")
