"""replSetResizeOplog: this member's oplog size (MB) and minimum retention (hours), as mongod 7.0.

Per member, not replicated (mongod resizes only the member it runs on). The size is the capped
size of `local.oplog.rs` (its catalog entry: it survives a restart); `minRetentionHours` is
mongod's `oplogMinRetentionHours`, held by the process (a restart forgets it, as on mongod):
truncation keeps the entries younger than it even when the oplog is over its size.
"""
from __future__ import annotations

from typing import Any, Optional

from bson.decimal128 import Decimal128

from ..bsonutil.types import type_name
from ..errors import CommandError, ErrorCode
from .context import CommandContext
from .declare import Args, command, on_cluster, value
from .fields import is_number

MB = 1024 * 1024
#: mongod's IDL bounds: at least 990 MB, at most 1 PB (in MB)
MIN_SIZE_MB = 990.0
MAX_SIZE_MB = float(1024 ** 3)


def _number(field: str, v: Any) -> float:
    if isinstance(v, bool) or not is_number(v):
        raise CommandError(ErrorCode.TypeMismatch,
                           f"BSON field 'replSetResizeOplog.{field}' is the wrong type '{type_name(v)}', "
                           "expected types '[long, int, decimal, double]'")
    return float(v.to_decimal()) if isinstance(v, Decimal128) else float(v)


def _bounded(field: str, v: float, op: str, bound: float) -> None:
    """mongod's IDL validator (location 51024, whichever bound), doubles printed as C's %g."""
    if (v < bound) if op == ">=" else (v > bound):
        raise CommandError(ErrorCode.BatchSizeNegative,
                           f"BSON field '{field}' value must be {op} {bound:g}, actual value '{v:g}'")


@command("replSetResizeOplog", help="Resize oplog using size (in MBs) and optionally, retention (in terms of hours)",
         admin_only=True, privileges=(on_cluster("replSetResizeOplog"),),
         fields=(value("size"), value("minRetentionHours")))
def repl_set_resize_oplog(ctx: CommandContext, args: Args) -> dict:
    oplog = ctx.engine.oplog
    if not oplog.enabled or ctx.engine.catalog.get("local", "oplog.rs") is None:
        raise CommandError(ErrorCode.NamespaceNotFound, "oplog does not exist")
    size: Optional[float] = None
    hours: Optional[float] = None
    if args.size is not None:
        size = _number("size", args.size)
        _bounded("size", size, ">=", MIN_SIZE_MB)
        _bounded("size", size, "<=", MAX_SIZE_MB)
    if args.min_retention_hours is not None:
        hours = _number("minRetentionHours", args.min_retention_hours)
        _bounded("minRetentionHours", hours, ">=", 0.0)
    if size is not None:
        oplog.resize(int(size * MB))
    if hours is not None:
        oplog.min_retention_hours = hours
    return {}
