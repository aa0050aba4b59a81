"""Generic fields: what any command may carry besides its own fields, declared once.

Each entry says what the field does here. `check_generic` runs before a command's handler: a
field that would change results and that ginkgodb does not honour is refused here, never
silently accepted (transactions until they exist; `apiStrict` outside API version 1;
`writeConcern` on a command that has none).
"""
from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Optional, Protocol

from bson.decimal128 import Decimal128

from ..bsonutil.types import type_name
from ..errors import CommandError, ErrorCode
from .fields import is_number


class CommandSpec(Protocol):
    """What the generic checks read of a command's declaration (declare.CommandSpec)."""

    name: str
    write_concern: bool

    def in_api_version_1(self, cmd: Mapping) -> bool: ...

NO_TRANSACTIONS = "Transaction numbers are only allowed on a replica set member or mongos"
API_STRICT_HELP = ("Information on supported commands and migrations in API Version 1 can be found "
                   "at https://dochub.mongodb.org/core/manual-versioned-api")


@dataclass(frozen=True)
class Generic:
    does: str                                                       # what it does here
    check: Optional[Callable[..., None]] = None                     # (value, spec, cmd)
    by_topology: bool = False   # the check also takes replica_set=: a member accepts more


def _refuse_transaction(value: Any, spec: CommandSpec, cmd: Mapping) -> None:
    raise CommandError(ErrorCode.IllegalOperation, NO_TRANSACTIONS)


def _as_float(value: Any) -> float:
    return float(value.to_decimal()) if isinstance(value, Decimal128) else float(value)


def check_max_time_ms(value: Any, spec: CommandSpec, cmd: Mapping) -> None:
    if not is_number(value):
        raise CommandError(ErrorCode.TypeMismatch,
                           f"BSON field '{spec.name}.maxTimeMS' is the wrong type '{type_name(value)}', "
                           "expected types '[long, int, decimal, double]'")
    value = _as_float(value)
    if value < 0:
        raise CommandError(ErrorCode.BadValue,
                           f"BSON field 'maxTimeMS' value must be >= 0, actual value '{value}'")
    if value != int(value):
        raise CommandError(ErrorCode.BadValue, f"maxTimeMS has non-integral value {value}")


_LEVELS = ("local", "available", "majority", "linearizable", "snapshot")


def check_read_concern(rc: Any, spec: Optional[CommandSpec] = None, cmd: Optional[Mapping] = None, *,
                       replica_set: bool = False) -> None:
    """What mongod accepts: on a standalone local, available and majority; a replica-set member
    also takes linearizable and cluster times (member_requests.py waits for them). snapshot
    needs transactions (outside them, atClusterTime reads are not served yet)."""
    if rc is None:
        return
    if not isinstance(rc, Mapping):
        raise CommandError(ErrorCode.TypeMismatch, "BSON field 'readConcern' is the wrong type, expected type 'object'")
    level = rc.get("level", "local")
    if level not in _LEVELS:
        raise CommandError(ErrorCode.FailedToParse,
                           "readConcern.level must be either 'local', 'majority', 'linearizable', "
                           "'available', or 'snapshot'")
    if level == "snapshot" and cmd is not None and cmd.get("autocommit") is False:
        return  # a transaction's snapshot (placement checked by commands/transactions.py)
    if replica_set:
        _check_member_read_concern(rc, level, spec.name if spec is not None else "")
        return
    if level in ("snapshot", "linearizable"):
        raise CommandError(ErrorCode.NotAReplicaSet,
                           f"Cannot use '{level}' read concern without a replica set")
    if "afterClusterTime" in rc or "atClusterTime" in rc:
        raise CommandError(ErrorCode.IllegalOperation, "Cannot specify a cluster time on a standalone")
    if "afterOpTime" in rc:
        raise CommandError(ErrorCode.NotAReplicaSet, "node needs to be a replica set member to use read concern")


#: what reads at a point in time outside a transaction (commands/transactions.py gives them
#: their snapshot)
SNAPSHOT_READS = frozenset({"find", "aggregate", "distinct"})


def _check_member_read_concern(rc: Mapping, level: str, name: str) -> None:
    """A replica-set member's read concern: majority is local on a member of one, linearizable
    is checked against primacy when the command runs, afterClusterTime waits there, snapshot
    reads a kept snapshot (engine/snapshot_reads.py)."""
    if "atClusterTime" in rc and level != "snapshot":
        raise CommandError(ErrorCode.InvalidOptions,
                           "readConcern level must be 'snapshot' when 'atClusterTime' is specified")
    if "atClusterTime" in rc and "afterClusterTime" in rc:
        raise CommandError(ErrorCode.InvalidOptions,
                           "Specifying a timestamp for readConcern snapshot in a causally consistent session "
                           "is not allowed")
    if level == "snapshot" and name not in SNAPSHOT_READS:
        raise CommandError(ErrorCode.InvalidOptions,
                           f'Command {name} does not support {{ readConcern: {{ level: "snapshot" }} }}')
    if "afterClusterTime" in rc and level in ("available", "linearizable"):
        raise CommandError(ErrorCode.InvalidOptions,
                           f"'afterClusterTime' field can be set only if level is one of local, majority, "
                           f"snapshot, but the level was {level}")
    if "afterOpTime" in rc:
        raise CommandError(ErrorCode.NotImplemented, "readConcern 'afterOpTime' is not supported by ginkgodb")


def check_write_concern(wc: Any, spec: Optional[CommandSpec] = None, cmd: Optional[Mapping] = None, *,
                        replica_set: bool = False) -> None:
    """A standalone (and a member of one) satisfies w: 0, 1 and "majority" (itself); j/fsync
    wait for the disk."""
    if spec is not None and not spec.write_concern:
        raise CommandError(ErrorCode.InvalidOptions, f"Command {spec.name} does not support writeConcern")
    if not isinstance(wc, Mapping):
        raise CommandError(ErrorCode.TypeMismatch,
                           "BSON field 'writeConcern' is the wrong type, expected type 'object'")
    w = wc.get("w", 1)
    if isinstance(w, str) and w != "majority":
        raise CommandError(ErrorCode.UnknownReplWriteConcern,
                           f"Cannot satisfy write concern: unrecognized write concern mode '{w}'")
    if is_number(w) and (w < 0 or w > 1):
        if w < 0 or w > 50:
            raise CommandError(ErrorCode.FailedToParse,
                               "w has to be a non-negative number and not greater than 50")
        if replica_set:
            return  # the write runs; member_requests.unsatisfied_write_concern reports the rest
        raise CommandError(ErrorCode.BadValue, "cannot use 'w' > 1 on a standalone")


def _check_api_version(value: Any, spec: CommandSpec, cmd: Mapping) -> None:
    if value != "1":
        raise CommandError(ErrorCode.APIVersionError,
                           f"API version must be \"1\". {API_STRICT_HELP}")
    if cmd.get("apiStrict") and not spec.in_api_version_1(cmd):
        raise CommandError(ErrorCode.APIStrictError,
                           f"Provided apiStrict:true, but the command {spec.name} is not in API Version 1. "
                           f"{API_STRICT_HELP}")


def _needs_api_version(value: Any, spec: CommandSpec, cmd: Mapping) -> None:
    if "apiVersion" not in cmd:
        raise CommandError(ErrorCode.APIVersionError,
                           "Provided apiStrict and/or apiDeprecationErrors without passing apiVersion. "
                           f"{API_STRICT_HELP}")


_INTERNAL = "cluster-internal (sharding/replication) field: a standalone has no peer that sends it"

GENERIC: dict[str, Generic] = {
    "$db": Generic("the database the command runs against"),
    "lsid": Generic("the logical session the command belongs to (sessions keep no server state yet)"),
    "$clusterTime": Generic("cluster time gossip: advances a replica-set member's clock (a standalone has "
                            "none)"),
    "$readPreference": Generic("read preference: one node serves every read"),
    "$queryOptions": Generic("legacy OP_QUERY wrapper of $readPreference: one node serves every read"),
    "readConcern": Generic("read concern: local/available/majority read committed data; a member also "
                           "waits for afterClusterTime", check_read_concern, by_topology=True),
    "writeConcern": Generic("write concern: w 0/1/majority, j and fsync wait for the disk",
                            check_write_concern, by_topology=True),
    "comment": Generic("a comment shown in currentOp and logs"),
    "maxTimeMS": Generic("the operation's time limit", check_max_time_ms),
    "maxTimeMSOpOnly": Generic(_INTERNAL),
    "txnNumber": Generic("the session's transaction or retryable-write number (commands/transactions.py)"),
    "startTransaction": Generic("starts a multi-document transaction (commands/transactions.py)"),
    "autocommit": Generic("false: the command belongs to a multi-document transaction"),
    "apiVersion": Generic("the Stable API version; only \"1\" exists", _check_api_version),
    "apiStrict": Generic("refuse commands outside API version 1", _needs_api_version),
    "apiDeprecationErrors": Generic("refuse deprecated behaviour of API version 1 (none is served)",
                                    _needs_api_version),
    "$audit": Generic("audit metadata: ginkgodb has no audit log"),
    "$client": Generic("client metadata forwarded by a router"),
    "mayBypassWriteBlocking": Generic("user write blocking is never enabled here"),
    "clientOperationKey": Generic("a router's key for killing operations"),
    "readOnly": Generic(_INTERNAL),
    "rawData": Generic(_INTERNAL),
    "versionContext": Generic(_INTERNAL),
    "$configServerState": Generic(_INTERNAL),
    "$topologyTime": Generic(_INTERNAL),
    "$configTime": Generic(_INTERNAL),
    "$oplogQueryData": Generic(_INTERNAL),
    "$replData": Generic(_INTERNAL),
    "databaseVersion": Generic(_INTERNAL),
    "shardVersion": Generic("a router's chunk version: dispatch checks it against what routers told this "
                            "shard (shard_versions.py)"),
}


#: the generic fields that have a check: dispatch calls `check_generic` only for a command
#: carrying one of them (most carry none)
GENERIC_CHECKED = frozenset(name for name, entry in GENERIC.items() if entry.check is not None)


def check_generic(spec: CommandSpec, cmd: Mapping, *, replica_set: bool = False) -> None:
    """Run the checks of the generic fields `cmd` carries (before the command runs); on a
    replica-set member (`replica_set`) the topology-dependent checks accept what a member does.
    The caller skips it when `cmd` carries none of GENERIC_CHECKED."""
    first = True
    for key in cmd:
        if first:
            first = False
            continue
        entry = GENERIC.get(key)
        if entry is not None and entry.check is not None:
            if entry.by_topology:
                entry.check(cmd[key], spec, cmd, replica_set=replica_set)
            else:
                entry.check(cmd[key], spec, cmd)


def deadline_from(cmd: Mapping[str, Any], started: Optional[float] = None) -> Any:
    """Monotonic deadline from maxTimeMS counted from `started` (default: now); None when
    absent, invalid (dispatch reports it) or 0, and for getMore, whose maxTimeMS is a tailable
    cursor's await time."""
    ms = cmd.get("maxTimeMS")
    if ms is None or not is_number(ms) or next(iter(cmd)) == "getMore":
        return None
    ms = _as_float(ms)
    if ms <= 0:
        return None
    return (time.monotonic() if started is None else started) + ms / 1000.0
