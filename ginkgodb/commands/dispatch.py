"""The one boundary where command documents become replies and exceptions become error replies.

Order of checks, all before a handler runs: the command exists (59; test-only commands exist
only with enableTestCommands), admin-only commands run
against admin (13), the generic fields are acceptable (generic.py), the command's own fields are
as declared (declare.py). Then the handler runs with the operation's deadline.
"""
from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from bson.errors import InvalidBSON

from ..errors import CommandError, ErrorCode, StorageError
from .context import CommandContext
from .declare import COMMANDS
from .generic import check_generic, deadline_from
from .profile import PROFILE
from .profiler import profiled_dispatch
from .server_parameters import test_commands_enabled

log = logging.getLogger("ginkgodb.commands")

_STORAGE_CODES = {
    "map_full": (ErrorCode.OperationFailed, "storage is full: {}"),
    "locked": (ErrorCode.IllegalOperation, "{}"),
    "corrupt": (ErrorCode.InternalError, "storage is corrupt: {}"),
    "closed": (ErrorCode.ShutdownInProgress, "the database is shut down: {}"),
    "io": (ErrorCode.OperationFailed, "storage error: {}"),
}


def command_name(cmd: Mapping[str, Any]) -> str:
    for key in cmd:
        return key
    raise CommandError(ErrorCode.FailedToParse, "Empty object is not a valid command")


def dispatch(ctx: CommandContext, cmd: Mapping[str, Any]) -> dict:
    """Run one command document; always returns a reply with `ok` (never raises CommandError).
    While some database profiles, the profiler runs it and records it (profiler.py)."""
    if PROFILE.active:
        return profiled_dispatch(ctx, cmd, _dispatch)
    return _dispatch(ctx, cmd)


def _dispatch(ctx: CommandContext, cmd: Mapping[str, Any]) -> dict:
    try:
        name = command_name(cmd)
        spec = COMMANDS.get(name)
        if spec is None or (spec.test_only and not test_commands_enabled()):
            raise CommandError(ErrorCode.CommandNotFound, f"no such command: '{name}'")
        if spec.admin_only and cmd.get("$db", "admin") != "admin":
            raise CommandError(ErrorCode.Unauthorized,
                               f"{name} may only be run against the admin database.")
        check_generic(spec, cmd)
        args = spec.parse(cmd, name)
        saved = ctx.deadline
        if saved is None:
            ctx.deadline = deadline_from(cmd)
        try:
            reply = spec.handler(ctx, args)
        finally:
            ctx.deadline = saved
        reply["ok"] = 1.0
        return reply
    except CommandError as exc:
        return exc.to_reply()
    except StorageError as exc:
        code, fmt = _STORAGE_CODES[exc.kind]
        return CommandError(code, fmt.format(exc.message)).to_reply()
    except InvalidBSON as exc:
        return CommandError(ErrorCode.InvalidBSON, f"invalid BSON: {exc}").to_reply()
    except RecursionError:
        return CommandError(ErrorCode.Overflow, "BSON nesting too deep").to_reply()
    except Exception as exc:  # a bug: report it as mongod reports an internal error, and log it
        log.exception("internal error running %r", dict(cmd) if len(str(cmd)) < 2000 else "<large>")
        return CommandError(ErrorCode.InternalError, f"internal error: {type(exc).__name__}: {exc}").to_reply()
