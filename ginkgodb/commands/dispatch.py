"""The one boundary where exceptions become reply documents."""
from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

from bson.errors import InvalidBSON

from ..errors import CommandError, ErrorCode, StorageError
from .context import CommandContext
from .registry import COMMANDS

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


def deadline_from(cmd: Mapping[str, Any], started: float | None = None) -> Any:
    """Monotonic deadline from maxTimeMS counted from `started` (default: now); None when
    absent or 0, and for getMore, whose maxTimeMS is a tailable cursor's await time."""
    ms = cmd.get("maxTimeMS")
    if ms is None or isinstance(ms, bool) or not isinstance(ms, (int, float)) or command_name(cmd) == "getMore":
        return None
    if ms < 0:
        raise CommandError(ErrorCode.BadValue, "BSON field 'maxTimeMS' value must be >= 0, actual value '%s'" % ms)
    return (time.monotonic() if started is None else started) + ms / 1000.0 if ms else None


_LEVELS = ("local", "available", "majority", "linearizable", "snapshot")


def check_read_concern(rc: Any) -> None:
    """What a standalone mongod accepts: local, available and majority; snapshot and
    linearizable need a replica set, cluster times need one too."""
    if rc is None:
        return
    if not isinstance(rc, Mapping):
        raise CommandError(ErrorCode.TypeMismatch, "BSON field 'readConcern' is the wrong type, expected type 'object'")
    level = rc.get("level", "local")
    if level not in _LEVELS:
        raise CommandError(ErrorCode.FailedToParse,
                           "readConcern.level must be either 'local', 'majority', 'linearizable', "
                           "'available', or 'snapshot'")
    if level in ("snapshot", "linearizable"):
        raise CommandError(ErrorCode.NotAReplicaSet,
                           f"Cannot use '{level}' read concern without a replica set")
    if "afterClusterTime" in rc or "atClusterTime" in rc:
        raise CommandError(ErrorCode.IllegalOperation, "Cannot specify a cluster time on a standalone")
    if "afterOpTime" in rc:
        raise CommandError(ErrorCode.NotAReplicaSet, "node needs to be a replica set member to use read concern")


#: generic fields that ask for a multi-document transaction or a retryable write: refused until
#: transactions exist, exactly as a standalone mongod refuses them, before the command runs
TRANSACTION_FIELDS = ("txnNumber", "startTransaction", "autocommit")
NO_TRANSACTIONS = "Transaction numbers are only allowed on a replica set member or mongos"


def refuse_transaction_fields(cmd: Mapping[str, Any]) -> None:
    for field in TRANSACTION_FIELDS:
        if field in cmd:
            raise CommandError(ErrorCode.IllegalOperation, NO_TRANSACTIONS)


def dispatch(ctx: CommandContext, cmd: Mapping[str, Any]) -> dict:
    """Run one command document; always returns a reply with `ok` (never raises CommandError)."""
    try:
        name = command_name(cmd)
        spec = COMMANDS.get(name)
        if spec is None:
            raise CommandError(ErrorCode.CommandNotFound, f"no such command: '{name}'")
        if spec.admin_only and cmd.get("$db", "admin") != "admin":
            raise CommandError(ErrorCode.Unauthorized,
                               f"{name} may only be run against the admin database.")
        refuse_transaction_fields(cmd)
        if "readConcern" in cmd:
            check_read_concern(cmd["readConcern"])
        saved = ctx.deadline
        if saved is None:
            ctx.deadline = deadline_from(cmd)
        try:
            reply = spec.handler(ctx, cmd)
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
