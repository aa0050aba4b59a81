"""currentOp / killOp over the server's table of in-flight operations.

killOp marks the operation's context killed; the engine notices at its next
`ctx.check_interrupt()` and the operation fails with 11601 Interrupted. Without a server
(embedded client) there is no op table: currentOp lists nothing.
"""
from __future__ import annotations

import datetime
import time
from collections.abc import Mapping
from typing import Any, Optional

import bson
from bson import json_util
from bson.int64 import Int64

from ..errors import CommandError, ErrorCode
from .context import CommandContext
from .declare import Args, command, on_cluster, value
from .fields import is_number
from .generic import GENERIC as GENERIC_ARGUMENTS
from .server_view import OpInfo

_MAX_COMMAND_BYTES = 1024
_OPTIONS = frozenset({"currentOp", "$all", "$ownOps", "$truncateOps"})
#: command name -> currentOp's `op` type; everything else is "command"
_OP_TYPES = {"find": "query", "getMore": "getmore", "insert": "insert", "update": "update",
             "delete": "remove"}
#: commands whose first value is not a collection name
_NOT_COLLECTION = frozenset({"getLog", "getParameter", "renameCollection", "explain", "hello",
                             "isMaster", "ismaster", "buildInfo", "buildinfo"})


def describe_op(op: OpInfo, host: str) -> dict:
    """One `inprog` entry in mongod's shape."""
    now = time.monotonic()
    running = max(now - op.started, 0.0)
    entry: dict = {
        "type": "op", "host": host, "desc": f"conn{op.connection_id}",
        "connectionId": op.connection_id, "client": op.client or "",
    }
    if op.client_metadata is not None:
        entry["clientMetadata"] = op.client_metadata
    entry.update({
        "active": True,
        "currentOpTime": datetime.datetime.now(datetime.UTC).isoformat(),
        "opid": op.opid,
        "secs_running": Int64(int(running)),
        "microsecs_running": Int64(int(running * 1_000_000)),
        "op": _OP_TYPES.get(op.name, "command"),
        "ns": namespace_of(op.command),
        "command": truncated(op.command),
        "numYields": 0, "locks": {}, "waitingForLock": False, "lockStats": {},
        "killPending": bool(getattr(op.ctx, "killed", False)),
    })
    return entry


def truncated(cmd: Mapping[str, Any]) -> Any:
    """The command as currentOp shows it: mongod replaces one over 1 KB by a `$truncated` string."""
    try:
        size = len(bson.encode(cmd))
    except Exception:  # not encodable as is: show its name only
        return {"$truncated": next(iter(cmd), "")}
    if size <= _MAX_COMMAND_BYTES:
        return cmd
    text = json_util.dumps({k: cmd[k] for k in list(cmd)[:8]})
    return {"$truncated": text[:_MAX_COMMAND_BYTES]}


def namespace_of(cmd: Mapping[str, Any]) -> str:
    """The namespace mongod reports for a command: `db.coll`, or `db.$cmd`."""
    db = cmd.get("$db", "admin")
    name = next(iter(cmd), "")
    if name == "getMore" and isinstance(cmd.get("collection"), str):
        return f"{db}.{cmd['collection']}"
    target = cmd.get(name)
    if isinstance(target, str) and target and name not in _NOT_COLLECTION:
        return f"{db}.{target}"
    return f"{db}.$cmd"


def current_ops(ctx: CommandContext, filter_spec: Optional[Mapping[str, Any]] = None) -> list[dict]:
    """The in-flight operations as currentOp (and `$currentOp`) report them."""
    if ctx.server is None:
        return []
    host = ctx.server.host
    entries = [describe_op(op, host) for op in ctx.server.in_progress()]
    if filter_spec:
        matches = _matcher(filter_spec)
        entries = [e for e in entries if matches(e)]
    return entries


def _matcher(spec: Mapping[str, Any]):
    try:
        from ..query.match import compile_filter
    except ImportError:  # the query layer not built yet: top-level equality only
        return lambda doc: all(doc.get(k) == v for k, v in spec.items())
    return compile_filter(dict(spec), where=False)


@command("currentOp", admin_only=True, help="Reports operations currently in progress.",
         open_fields="other fields filter the operations listed", inline=True, privileges=(on_cluster("inprog"),))
def current_op(ctx: CommandContext, args: Args) -> dict:
    cmd = args.cmd
    filter_spec = {k: v for k, v in cmd.items() if k not in _OPTIONS and k not in GENERIC_ARGUMENTS}
    reply: dict = {"inprog": current_ops(ctx, filter_spec)}
    if getattr(ctx.engine, "fsync_locked", False):
        reply["fsyncLock"] = True  # as mongod reports an fsyncLock-ed server
    return reply


@command("killOp", admin_only=True, help="Kills an operation in progress: { killOp: 1, op: <opid> }",
         fields=(value("op"),), inline=True, privileges=(on_cluster("killop"),))
def kill_op(ctx: CommandContext, args: Args) -> dict:
    cmd = args.cmd
    if "op" not in cmd:
        raise CommandError(ErrorCode.BadValue, 'Did not provide "op" field')
    opid = cmd["op"]
    if not is_number(opid):
        raise CommandError(ErrorCode.TypeMismatch, '"op" field must be a number')
    if ctx.server is not None:
        ctx.server.kill_op(int(opid))
    return {"info": "attempting to kill op"}
