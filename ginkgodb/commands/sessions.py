"""Logical sessions on a standalone: startSession, endSessions, refreshSessions, killSessions;
and the transaction commands, which a standalone refuses.

The engine's session catalog (engine/sessions.py) keeps each session's transaction number and open
transaction; ending or killing a session aborts its transaction. Transactions themselves are
commands/transactions.py's.
"""
from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from bson.binary import Binary

from ..bsonutil.types import type_name
from ..engine import session_key
from ..errors import CommandError, ErrorCode
from .context import CommandContext
from .declare import ANY_USER, Args, command, on_cluster
from .server_view import LOGICAL_SESSION_TIMEOUT_MINUTES


def _session_list(cmd: Mapping[str, Any]) -> list:
    name = next(iter(cmd))
    value = cmd[name]
    if not isinstance(value, list):
        raise CommandError(ErrorCode.TypeMismatch,
                           f"BSON field '{name}.{name}' is the wrong type '{type_name(value)}', "
                           "expected type 'array'")
    for item in value:
        if not isinstance(item, Mapping):
            raise CommandError(ErrorCode.TypeMismatch,
                               f"BSON field '{name}.{name}' entries must be objects")
    return value


@command("startSession", help="start a logical session", inline=True, requires_auth=False)
def start_session(ctx: CommandContext, args: Args) -> dict:
    lsid = {"id": Binary.from_uuid(uuid.uuid4())}
    ctx.engine.sessions.session(lsid, session_key(lsid))
    return {"id": lsid, "timeoutMinutes": LOGICAL_SESSION_TIMEOUT_MINUTES}


def _keys(cmd: Mapping[str, Any]) -> list[bytes]:
    keys = []
    for lsid in _session_list(cmd):
        key = session_key(lsid)
        if key is None:
            raise CommandError(ErrorCode.IDLFailedToParse,
                               f"BSON field '{next(iter(cmd))}.id' is missing but a required field")
        keys.append(key)
    return keys


@command("endSessions", help="end a set of logical sessions", requires_auth=False, api_version_1=True)
def end_sessions(ctx: CommandContext, args: Args) -> dict:
    ctx.engine.sessions.end(_keys(args.cmd))
    return {}


@command("killSessions", help="kill a logical session and its operations", privileges=(ANY_USER,))
def kill_sessions(ctx: CommandContext, args: Args) -> dict:
    ctx.engine.sessions.end(_keys(args.cmd))
    return {}


@command("refreshSessions", help="renew a set of logical sessions", privileges=(ANY_USER,), api_version_1=True)
def refresh_sessions(ctx: CommandContext, args: Args) -> dict:
    for lsid, key in zip(_session_list(args.cmd), _keys(args.cmd)):
        ctx.engine.sessions.session(lsid, key)
    return {}


def _kill_all(ctx: CommandContext, args: Args) -> dict:
    """All sessions (ginkgodb has one user: an empty list and any user list mean everyone's)."""
    _session_list(args.cmd)
    ctx.engine.sessions.kill_all()
    return {}


for _name, _help in (("killAllSessions", "kill all logical sessions, for a user, and their operations"),
                     ("killAllSessionsByPattern", "kill logical sessions by pattern")):
    command(_name, help=_help, privileges=(on_cluster("killAnySession"),))(_kill_all)
