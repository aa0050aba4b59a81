"""The one boundary where command documents become replies and exceptions become error replies.

Order of checks, all before a handler runs: the command exists (59; test-only commands exist
only with enableTestCommands), the client is authenticated when the command needs it (13),
admin-only commands run
against admin (13), the generic fields are acceptable (generic.py), the command's own fields are
as declared (declare.py), the user holds the command's declared privileges (13,
authorization.py). On a replica-set member, what a member checks (member_requests.py);
then the fail points (fail_points.py, test commands only). Then the handler runs with the
operation's deadline. A member's replies carry its cluster time.
"""
from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Optional

from bson.errors import InvalidBSON

from ..engine import UnboundedPlan, WouldBlock
from ..errors import CommandError, ErrorCode, StorageError
from ..query.js import operating
from .authorization import authorize, check_authenticated
from .context import CommandContext
from .declare import COMMANDS, writes_data
from .error_labels import error_labels
from .fail_points import FAIL_POINTS, INJECTED, Firing, fail_after, fail_before
from .generic import GENERIC_CHECKED, check_generic, deadline_from
from .inline_writes import OFF_LOOP
from .member_requests import before_command, decorate_reply, unsatisfied_write_concern
from .profile import PROFILE
from .profiler import profiled_dispatch
from .replica_set import member_of
from .replies import ErrmsgOnlyFailure
from .server_parameters import script_settings, test_commands_enabled
from .shard_versions import enter_versioned, leave_versioned
from .transactions import PLAIN_SCOPE, enter, only_touches_session, unscoped

log = logging.getLogger("ginkgodb.commands")

_STORAGE_CODES = {
    "map_full": (ErrorCode.OperationFailed, "storage is full: {}"),
    "locked": (ErrorCode.IllegalOperation, "{}"),
    "corrupt": (ErrorCode.InternalError, "storage is corrupt: {}"),
    "closed": (ErrorCode.ShutdownInProgress, "the database is shut down: {}"),
    "io": (ErrorCode.OperationFailed, "storage error: {}"),
    # the closest mongod has: 14031 is what it answers when the disk is too small (at start-up,
    # and for index builds below indexBuildMinAvailableDiskSpaceMB); docs/compatibility.md
    "disk_full": (ErrorCode.OutOfDiskSpace, "{}"),
}


def command_name(cmd: Mapping[str, Any]) -> str:
    for key in cmd:
        return key
    raise CommandError(ErrorCode.FailedToParse, "Empty object is not a valid command")


def _label(ctx: CommandContext, cmd: Mapping[str, Any], reply: dict, ran: bool) -> None:
    """mongod's error labels (error_labels.py), beside any the error already carries. `ran`:
    the command got as far as its cursor (not failed by a fail point first)."""
    from ..engine import ChangeStreamCursor
    wce = reply.get("writeConcernError")
    wc_code = wce.get("code") if isinstance(wce, Mapping) else None
    code = reply.get("code") if reply.get("ok") != 1.0 else None
    if code is None and wc_code is None:
        return
    labels = error_labels(next(iter(cmd), ""), cmd, code, wc_code,
                          lambda: ran and isinstance(ctx.engine.cursors.peek(cmd.get("getMore")),
                                                     ChangeStreamCursor))
    if labels:
        have = reply.setdefault("errorLabels", [])
        have.extend(label for label in labels if label not in have)


def _in_scope(ctx: CommandContext, spec: Any, cmd: Mapping[str, Any], args: Any) -> dict:
    """The handler, against the engine view of the command's session scope (a transaction's,
    a retryable write's, or the engine itself)."""
    if ctx.transaction is not None:  # nested: already inside a command's scope
        return spec.handler(ctx, args)
    base = ctx.engine
    if unscoped(spec.name, cmd) or only_touches_session(base, spec.name, cmd):   # the engine itself
        ctx.transaction, ctx.base_engine = PLAIN_SCOPE, base
        try:
            return spec.handler(ctx, args)
        finally:
            ctx.transaction = None
    scope = enter(ctx, spec, cmd)
    with scope:
        ctx.engine, ctx.transaction, ctx.base_engine = scope.engine, scope, base
        try:
            reply = spec.handler(ctx, args)
        except BaseException as exc:
            scope.failed(exc, base)
            raise
        finally:
            ctx.engine, ctx.transaction = base, None
        scope.succeeded(reply, base)
    return reply


def dispatch(ctx: CommandContext, cmd: Mapping[str, Any]) -> dict:
    """Run one command document; always returns a reply with `ok` (never raises CommandError).
    While some database profiles, the profiler runs it and records it (profiler.py)."""
    if PROFILE.active:
        return profiled_dispatch(ctx, cmd, _dispatch)
    return _dispatch(ctx, cmd)


def _dispatch(ctx: CommandContext, cmd: Mapping[str, Any]) -> dict:
    member = None if ctx.server is None else member_of(ctx)   # embedded: no member
    reply = _run(ctx, cmd, member)
    if member is not None:
        unsatisfied_write_concern(member, cmd, reply)
    injected = reply.pop(INJECTED, None)
    if injected is not True and (reply.get("ok") != 1.0 or "writeConcernError" in reply):
        _label(ctx, cmd, reply, injected is None)
    if member is not None:
        decorate_reply(ctx, member, next(iter(cmd), ""), reply)
    return reply


def _run(ctx: CommandContext, cmd: Mapping[str, Any], member: Any) -> dict:
    firing: Optional[Firing] = None
    try:
        name = next(iter(cmd), None)
        if name is None:
            name = command_name(cmd)   # raises: an empty command
        spec = COMMANDS.get(name)
        if spec is None or (spec.test_only and not test_commands_enabled()):
            raise CommandError(ErrorCode.CommandNotFound, f"no such command: '{name}'")
        if ctx.auth is not None:
            check_authenticated(ctx, spec, name, cmd)
        if spec.admin_only and cmd.get("$db", "admin") != "admin":
            raise CommandError(ErrorCode.Unauthorized,
                               f"{name} may only be run against the admin database.")
        if not GENERIC_CHECKED.isdisjoint(cmd):
            check_generic(spec, cmd, replica_set=member is not None and member.initialized)
        args = spec.parse(cmd, name)
        after = authorize(ctx, spec, name, cmd, args) if ctx.auth is not None else None
        saved = ctx.deadline
        if saved is None and "maxTimeMS" in cmd:
            ctx.deadline = deadline_from(cmd)
        try:
            if member is not None:
                before_command(ctx, member, name, cmd)
            if FAIL_POINTS.active:
                firing = fail_before(ctx, name, cmd)
            if getattr(ctx.engine, "fsync_locked", False) and writes_data(cmd):
                ctx.engine.wait_writable(ctx.check_interrupt)  # fsyncLock holds writes back
            # operating: the operation the query layer's loops and regex matches check
            if "shardVersion" in cmd:   # a router's request
                ns = enter_versioned(cmd)
                try:
                    with operating(ctx, script_settings):
                        reply = _in_scope(ctx, spec, cmd, args)
                finally:
                    if ns:
                        leave_versioned(ns)
            else:
                with operating(ctx, script_settings):
                    reply = _in_scope(ctx, spec, cmd, args)
        finally:
            ctx.deadline = saved
        reply["ok"] = 1.0
        if after is not None:
            after(reply)
        if firing is not None:
            fail_after(ctx, firing, reply)
        return reply
    except WouldBlock as exc:   # run on the event loop, it would wait: the server runs it again in a worker
        if isinstance(exc, UnboundedPlan) and ctx.engine is not None:
            OFF_LOOP.note(ctx.engine, cmd)   # and sends the next of its shape to a worker at once
        raise
    except CommandError as exc:
        return exc.to_reply()
    except ErrmsgOnlyFailure as exc:
        return {"ok": 0.0, "errmsg": exc.errmsg}
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
