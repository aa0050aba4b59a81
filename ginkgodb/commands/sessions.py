"""Logical sessions on a standalone: startSession, endSessions, refreshSessions, killSessions;
and the transaction commands, which a standalone refuses.

Sessions matter to drivers only as a capability (hello's logicalSessionTimeoutMinutes): they
attach an `lsid` to every command and end their sessions on close. ginkgodb keeps no per-session
state yet (no retryable writes or transactions on a standalone), so ending, refreshing or killing
sessions only validates the request.
"""
from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from bson.binary import Binary

from ..bsonutil.types import type_name
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
    return {"id": {"id": Binary.from_uuid(uuid.uuid4())}, "timeoutMinutes": LOGICAL_SESSION_TIMEOUT_MINUTES}


def _validate_only(ctx: CommandContext, args: Args) -> dict:
    """Sessions keep no server state yet: these commands check their session list and succeed."""
    _session_list(args.cmd)
    return {}


for _name, _help, _v1 in (("endSessions", "end a set of logical sessions", True),
                          ("refreshSessions", "renew a set of logical sessions", True),
                          ("killSessions", "kill a logical session and its operations", False),
                          ("killAllSessions", "kill all logical sessions, for a user, and their operations",
                           False),
                          ("killAllSessionsByPattern", "kill logical sessions by pattern", False)):
    command(_name, help=_help, inline=True, requires_auth=_name != "endSessions", api_version_1=_v1,
            privileges=(on_cluster("killAnySession"),) if _name.startswith("killAll") else (ANY_USER,))(
        _validate_only)
