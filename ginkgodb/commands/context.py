"""What a command handler may use besides its command document."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional


@dataclass
class CommandContext:
    """Per-connection (or per embedded client) state handed to every command.

    `engine` is the ginkgodb.engine.Engine; `server` is the wire server's shared state (None when
    embedded); `connection_id` numbers connections as mongod does (1 for the embedded client).
    """

    engine: Any
    connection_id: int = 1
    client_address: Optional[str] = None
    server: Any = None
    client_metadata: Optional[dict] = None
    extra: dict = field(default_factory=dict)
