"""Logical sessions on a standalone: startSession, endSessions, refreshSessions, killSessions.

Sessions matter to drivers only as a capability (hello's logicalSessionTimeoutMinutes): they
attach an `lsid` to every command and end their sessions on close. ginkgodb keeps no per-session
state (no retryable writes or transactions on a standalone), so ending, refreshing or killing
sessions only validates the request.
"""
from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from bson.binary import Binary

from ..errors import CommandError, ErrorCode
from ..bsonutil.types import type_name
from ._server_view import LOGICAL_SESSION_TIMEOUT_MINUTES
from .context import CommandContext
from .registry import command


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


@command("startSession", help="start a logical session")
def start_session(ctx: CommandContext, cmd: Mapping[str, Any]) -> dict:
    return {"id": {"id": Binary.from_uuid(uuid.uuid4())}, "timeoutMinutes": LOGICAL_SESSION_TIMEOUT_MINUTES}


@command("endSessions", help="end a set of logical sessions")
def end_sessions(ctx: CommandContext, cmd: Mapping[str, Any]) -> dict:
    _session_list(cmd)
    return {}


@command("refreshSessions", help="renew a set of logical sessions")
def refresh_sessions(ctx: CommandContext, cmd: Mapping[str, Any]) -> dict:
    _session_list(cmd)
    return {}


@command("killSessions", help="kill a logical session and its operations")
def kill_sessions(ctx: CommandContext, cmd: Mapping[str, Any]) -> dict:
    _session_list(cmd)
    return {}


@command("killAllSessions", help="kill all logical sessions, for a user, and their operations")
def kill_all_sessions(ctx: CommandContext, cmd: Mapping[str, Any]) -> dict:
    _session_list(cmd)
    return {}


@command("killAllSessionsByPattern", help="kill logical sessions by pattern")
def kill_all_sessions_by_pattern(ctx: CommandContext, cmd: Mapping[str, Any]) -> dict:
    _session_list(cmd)
    return {}
