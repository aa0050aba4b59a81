"""`_ginkgoSetShardVersion`: a router tells this shard its version of a sharded collection, or
marks a migration's critical section (the check itself: shard_versions.py). Entering the
critical section (or starting to hold orphans) returns once the versioned requests already past
the check have finished, so the migration's final catch-up sees every write the donor accepted
and no request that counted on there being no orphans sees the clone."""
from __future__ import annotations

from typing import Any

from bson.timestamp import Timestamp

from ..errors import CommandError, ErrorCode
from .declare import Args, boolean, command, on_cluster, value
from .shard_versions import set_orphans, set_version, wait_drained

DRAIN_TIMEOUT = 10.0


@command("_ginkgoSetShardVersion", admin_only=True,
         help="internal: a router sets this shard's version of a sharded collection",
         fields=(value("e"), value("t"), value("v"), boolean("critical"), boolean("unset"), value("orphans")),
         privileges=(on_cluster("internal"),))
def set_shard_version(ctx: Any, args: Args) -> dict:
    ns = args.value
    if not isinstance(ns, str) or "." not in ns:
        raise CommandError(ErrorCode.InvalidNamespace, f"Invalid namespace specified '{ns}'")
    if args.unset:
        set_version(ns, None)
        return {}
    if args.v is None and args.orphans is not None:   # the orphans flag alone
        set_orphans(ns, bool(args.orphans))
        _drain(ns, bool(args.orphans))
        return {}
    if not isinstance(args.v, Timestamp):
        raise CommandError(ErrorCode.TypeMismatch, "'v' must be a Timestamp (major, minor)")
    set_version(ns, {"e": args.e, "t": args.t, "v": args.v, "critical": args.critical},
                None if args.orphans is None else bool(args.orphans))
    try:
        _drain(ns, args.critical or bool(args.orphans))
    except CommandError:
        set_version(ns, {"e": args.e, "t": args.t, "v": args.v, "critical": False})
        raise
    return {}


def _drain(ns: str, needed: bool) -> None:
    """Entering a critical section, or starting to hold orphans: wait for the versioned requests
    that passed the check before (they counted on neither)."""
    if needed and not wait_drained(ns, DRAIN_TIMEOUT):
        raise CommandError(ErrorCode.LockBusy, f"versioned requests on {ns} did not finish within "
                                               f"{DRAIN_TIMEOUT:.0f} s")
