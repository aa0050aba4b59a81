"""Server settings: one frozen value built by the CLI (or by tests) and read everywhere else."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

DEFAULT_PORT = 27017
DEFAULT_BIND = "127.0.0.1"
DEFAULT_DBPATH = "./ginkgo-data"
DEFAULT_SLOW_MS = 100
#: mongod's default --maxConns ceiling reported as connections.available
DEFAULT_MAX_CONNECTIONS = 1_000_000


@dataclass(frozen=True)
class ServerConfig:
    port: int = DEFAULT_PORT
    bind: tuple[str, ...] = (DEFAULT_BIND,)
    dbpath: Optional[str] = DEFAULT_DBPATH   # None: in-memory (nothing survives a restart)
    log_level: str = "info"
    slow_ms: int = DEFAULT_SLOW_MS
    quiet: bool = False
    workers: int = 16                        # threads running commands off the event loop
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    shutdown_grace: float = 15.0             # seconds in-flight commands get on shutdown
    set_parameters: tuple[tuple[str, str], ...] = ()   # --setParameter name=value, in order
    argv: tuple[str, ...] = field(default=())

    @property
    def in_memory(self) -> bool:
        return self.dbpath is None

    def parsed_options(self) -> dict[str, Any]:
        """getCmdLineOpts' `parsed`, in mongod's option tree."""
        storage: dict[str, Any] = {"engine": "memory"} if self.in_memory else {"dbPath": self.dbpath}
        out: dict[str, Any] = {
            "net": {"bindIp": ",".join(self.bind), "port": self.port,
                    "maxIncomingConnections": self.max_connections},
            "operationProfiling": {"slowOpThresholdMs": self.slow_ms},
            "storage": storage,
            "systemLog": {"quiet": self.quiet, "verbosity": 1 if self.log_level == "debug" else 0},
        }
        if self.set_parameters:
            out["setParameter"] = dict(self.set_parameters)  # values as given, as mongod reports them
        return out
