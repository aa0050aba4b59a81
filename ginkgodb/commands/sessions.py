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


def _validate_only(ctx: CommandContext, cmd: Mapping[str, Any]) -> dict:
    """Sessions keep no server state yet: these commands check their session list and succeed."""
    _session_list(cmd)
    return {}


for _name, _help in (("endSessions", "end a set of logical sessions"),
                     ("refreshSessions", "renew a set of logical sessions"),
                     ("killSessions", "kill a logical session and its operations"),
                     ("killAllSessions", "kill all logical sessions, for a user, and their operations"),
                     ("killAllSessionsByPattern", "kill logical sessions by pattern")):
    command(_name, help=_help)(_validate_only)


def _no_transaction(ctx: CommandContext, cmd: Mapping[str, Any]) -> dict:
    """Without a transaction number there is no transaction to finish (a standalone's answer)."""
    from .dispatch import NO_TRANSACTIONS
    raise CommandError(ErrorCode.IllegalOperation, NO_TRANSACTIONS)


for _name, _help in (("commitTransaction", "commit a multi-document transaction"),
                     ("abortTransaction", "abort a multi-document transaction")):
    command(_name, help=_help, admin_only=True)(_no_transaction)
