"""The server's shared state: counters, open connections and the in-flight op table.

Mutated only on the event-loop thread (commands run in worker threads but are registered and
counted before they leave the loop), so plain ints and dicts suffice; readers in worker threads
copy before iterating.
"""
from __future__ import annotations

import itertools
import socket
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Optional

from ..commands import OpInfo, ReplicaSetMember, Security, TopologyWatch
from ..wire import SUPPORTED_COMPRESSORS
from .config import ServerConfig
from .logs import RecentLines

#: write commands count their statements in opcounters; find and getMore have their own counters
_STATEMENT_FIELDS = {"insert": ("insert", "documents"), "update": ("update", "updates"),
                     "delete": ("delete", "deletes")}
_READ_COUNTERS = {"find": "query", "getMore": "getmore"}


#: options whose values getCmdLineOpts shows as "<password>", as mongod does
_SECRET_OPTIONS = ("--tlsCertificateKeyFilePassword",)


def redacted_argv(argv: Any) -> list[str]:
    """The command line with secrets replaced (`--opt value` and `--opt=value` forms)."""
    out: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            out.append("<password>")
            hide_next = False
            continue
        name, eq, _ = arg.partition("=")
        if name in _SECRET_OPTIONS:
            if eq:
                out.append(f"{name}=<password>")
            else:
                out.append(arg)
                hide_next = True
            continue
        out.append(arg)
    return out


class ServerState:
    """Implements commands.ServerView for the wire server."""

    def __init__(self, config: ServerConfig, recent_log: Optional[RecentLines] = None,
                 max_connections: Optional[int] = None) -> None:
        self.config = config
        self.max_connections = config.max_connections if max_connections is None else max_connections
        self.started = time.time()
        self.host = f"{socket.gethostname()}:{config.port}"
        self.compressors: tuple[str, ...] = SUPPORTED_COMPRESSORS
        self.argv = redacted_argv(config.argv)
        self.parsed_options = config.parsed_options()
        self.recent_log = recent_log
        self.startup_warnings: list[str] = []
        self.current_connections = 0
        self.total_connections = 0
        self.rejected_connections = 0
        self.bytes_in = 0
        self.bytes_out = 0
        self.requests = 0
        #: short commands declared for the event loop that ran in a worker after all, because what
        #: they would wait for was held elsewhere (server/protocol.py `_run_on_loop`)
        self.inline_deferred = 0
        self._opcounters = {"insert": 0, "query": 0, "update": 0, "delete": 0, "getmore": 0, "command": 0}
        self._ops: dict[int, OpInfo] = {}
        self._opids: Iterator[int] = itertools.count(1)
        self.shutting_down = False
        #: set by the Server: stop cleanly, giving in-flight operations this many seconds
        self.on_shutdown_request: Optional[Callable[[float], None]] = None
        # hello's topologyVersion (awaited on the event loop: see hello_stream.py) and, with
        # --replSet, the replica-set member (set by the server once it knows its address)
        self.topology = TopologyWatch()
        self.awaits_hello = True
        self.replica_set: Optional[ReplicaSetMember] = None
        #: --auth, cursor owners and where authentication events go (set by the Server)
        self.security = Security(config.auth)

    def number_ops(self, opids: Iterator[int]) -> None:
        """Where operation ids come from (serve --workers: each worker its own residue class,
        so that killOp finds the worker that runs an operation)."""
        self._opids = opids

    def set_port(self, port: int) -> None:
        """The port actually bound (differs from the config when it asked for port 0)."""
        self.host = f"{socket.gethostname()}:{port}"
        self.parsed_options["net"]["port"] = port

    # -- ServerView -------------------------------------------------------------------------
    def connection_stats(self) -> dict[str, Any]:
        active = len({op.connection_id for op in list(self._ops.values())})
        return {"current": self.current_connections,
                "available": max(self.max_connections - self.current_connections, 0),
                "totalCreated": self.total_connections, "rejected": self.rejected_connections,
                "active": active}

    def opcounters(self) -> dict[str, int]:
        return dict(self._opcounters)

    def network_stats(self) -> dict[str, int]:
        return {"bytesIn": self.bytes_in, "bytesOut": self.bytes_out, "physicalBytesIn": self.bytes_in,
                "physicalBytesOut": self.bytes_out, "numRequests": self.requests}

    def in_progress(self) -> list[OpInfo]:
        return list(self._ops.values())

    def kill_op(self, opid: int) -> bool:
        op = self._ops.get(opid)
        if op is None:
            return False
        op.ctx.killed = True
        return True

    def request_shutdown(self, timeout_secs: float) -> None:
        if self.on_shutdown_request is not None:
            self.on_shutdown_request(timeout_secs)

    def log_lines(self, name: str) -> Optional[list[str]]:
        if name == "startupWarnings":
            return list(self.startup_warnings)
        return list(self.recent_log.lines) if self.recent_log is not None else []

    # -- bookkeeping (event-loop thread) ------------------------------------------------------
    def count(self, name: str, command: Mapping[str, Any]) -> None:
        """Update opcounters as mongod does: write statements, finds, getMores, other commands."""
        if name in _STATEMENT_FIELDS:
            counter, field = _STATEMENT_FIELDS[name]
            items = command.get(field)
            self._opcounters[counter] += len(items) if isinstance(items, list) else 0
        else:
            self._opcounters[_READ_COUNTERS.get(name, "command")] += 1

    def begin_op(self, connection_id: int, client: Optional[str], command: Mapping[str, Any], ctx: Any,
                 client_metadata: Optional[dict]) -> OpInfo:
        op = OpInfo(opid=next(self._opids), connection_id=connection_id, client=client, command=command,
                    ctx=ctx, client_metadata=client_metadata)
        self._ops[op.opid] = op
        return op

    def end_op(self, op: OpInfo) -> None:
        self._ops.pop(op.opid, None)

    @property
    def ops_in_flight(self) -> int:
        return len(self._ops)

    def kill_all(self) -> None:
        for op in list(self._ops.values()):
            op.ctx.killed = True
