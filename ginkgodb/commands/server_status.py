"""serverStatus: process, connection, traffic and memory counters in mongod's shape.

Without a server (embedded client) the connection and traffic sections are zeros.
"""
from __future__ import annotations

import datetime
import os
import socket
import time
from collections.abc import Mapping
from typing import Any

from bson.int64 import Int64

from ..version import MONGODB_VERSION, __version__
from ._system_facts import process_memory_mb
from .context import CommandContext
from .declare import Args, command, on_cluster
from .server_view import PROCESS_START

_ZERO_OPCOUNTERS = {"insert": 0, "query": 0, "update": 0, "delete": 0, "getmore": 0, "command": 0}
_ZERO_CONNECTIONS = {"current": 0, "available": 0, "totalCreated": 0, "rejected": 0, "active": 0}
_ZERO_NETWORK = {"bytesIn": 0, "bytesOut": 0, "physicalBytesIn": 0, "physicalBytesOut": 0,
                 "numRequests": 0}


@command("serverStatus", help="returns lots of administrative server statistics",
         open_fields="the fields switch sections on or off", inline=True, privileges=(on_cluster("serverStatus"),))
def server_status(ctx: CommandContext, args: Args) -> dict:
    cmd = args.cmd
    server = ctx.server
    started = server.started if server is not None else PROCESS_START
    uptime = max(time.time() - started, 0.0)
    reply: dict = {
        "host": server.host if server is not None else socket.gethostname(),
        "version": MONGODB_VERSION,
        "process": "mongod",
        "pid": Int64(os.getpid()),
        "uptime": float(int(uptime)),
        "uptimeMillis": Int64(int(uptime * 1000)),
        "uptimeEstimate": Int64(int(uptime)),
        "localTime": datetime.datetime.now(datetime.UTC),
    }
    for name, build in _SECTIONS.items():
        if _wanted(cmd, name):
            reply[name] = build(ctx)
    return reply


def _wanted(cmd: Mapping[str, Any], section: str) -> bool:
    """mongod's section switch: `{serverStatus: 1, opcounters: 0}` leaves a section out."""
    flag = cmd.get(section, True)
    return bool(flag) if isinstance(flag, (bool, int, float)) else True


def _connections(ctx: CommandContext) -> dict:
    return dict(ctx.server.connection_stats()) if ctx.server is not None else dict(_ZERO_CONNECTIONS)


def _network(ctx: CommandContext) -> dict:
    stats = ctx.server.network_stats() if ctx.server is not None else _ZERO_NETWORK
    return {k: Int64(v) for k, v in stats.items()}


def _opcounters(ctx: CommandContext) -> dict:
    counts = ctx.server.opcounters() if ctx.server is not None else _ZERO_OPCOUNTERS
    return {k: Int64(v) for k, v in counts.items()}


def _mem(ctx: CommandContext) -> dict:
    resident, virtual = process_memory_mb()
    return {"bits": 64, "resident": resident, "virtual": virtual, "supported": True}


def _storage_engine(ctx: CommandContext) -> dict:
    kv = getattr(ctx.engine, "kv", None)
    name = type(kv).__name__.removesuffix("Engine").lower() if kv is not None else "unknown"
    return {"name": name, "supportsCommittedReads": True, "persistent": name != "memory",
            "readOnly": False}


def _asserts(ctx: CommandContext) -> dict:
    return {"regular": 0, "warning": 0, "msg": 0, "user": 0, "tripwire": 0, "rollovers": 0}


def _ginkgodb(ctx: CommandContext) -> dict:
    return {"version": __version__}


_SECTIONS = {"asserts": _asserts, "connections": _connections, "mem": _mem, "network": _network,
             "opcounters": _opcounters, "storageEngine": _storage_engine, "ginkgodb": _ginkgodb}
