"""The replica-set commands: replSetInitiate, replSetGetStatus, replSetGetConfig, replSetStepDown,
replSetFreeze, replSetMaintenance, replSetReconfig, replSetUpdatePosition, replSetSyncFrom (the
oplog's size: repl_set_oplog.py).

On a standalone they answer mongod's 76 NoReplicationEnabled; before initiate, 94
NotYetInitialized. The member itself is in replica_set.py.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bson.timestamp import Timestamp

from ..bsonutil.types import type_name
from ..errors import CommandError, ErrorCode
from .context import CommandContext
from .declare import Args, boolean, command, ignored, on_cluster, value
from .fields import is_number
from .replica_set import MemberState, ReplicaSetMember, member_of
from .replicated_member import host_port

NOT_STARTED = "This node was not started with replication enabled."


def _member(ctx: CommandContext) -> ReplicaSetMember:
    """mongod's checkReplEnabledForCommand: a member with a configuration."""
    member = member_of(ctx)
    if member is None:
        raise CommandError(ErrorCode.NoReplicationEnabled, "not running with --replSet")
    if member.config is None:
        raise CommandError(ErrorCode.NotYetInitialized, "no replset config has been received",
                           info={"info": "run rs.initiate(...) if not yet done for the set"})
    if member.state is MemberState.REMOVED:
        raise CommandError(ErrorCode.InvalidReplicaSetConfig,
                           "Our replica set config is invalid or we are not a member of it")
    return member


def _seconds(name: str, v: Any, field: str) -> float:
    if not is_number(v) or isinstance(v, bool):
        raise CommandError(ErrorCode.TypeMismatch,
                           f"BSON field '{name}.{field}' is the wrong type '{type_name(v)}', "
                           "expected types '[long, int, decimal, double]'")
    return float(v)


@command("replSetInitiate", help="Initiate/christen a replica set.\nhttp://dochub.mongodb.org/core/replicasetcommands",
         admin_only=True, privileges=(on_cluster("replSetConfigure"),))
def repl_set_initiate(ctx: CommandContext, args: Args) -> dict:
    member = member_of(ctx)
    if member is None:
        raise CommandError(ErrorCode.NoReplicationEnabled, NOT_STARTED)
    config = args.value if isinstance(args.value, Mapping) else None
    return member.initiate(config)


@command("replSetGetStatus", help="Report status of a replica set from the POV of this server\n"
                                  "{ replSetGetStatus : 1 }\nhttp://dochub.mongodb.org/core/replicasetcommands",
         admin_only=True, inline=True, privileges=(on_cluster("replSetGetStatus"),),
         fields=(ignored("initialSync", "a member of one never runs an initial sync"),))
def repl_set_get_status(ctx: CommandContext, args: Args) -> dict:
    return _member(ctx).status()


@command("replSetGetConfig", help="Returns the current replica set configuration{ replSetGetConfig : 1 }\n"
                                  "http://dochub.mongodb.org/core/replicasetcommands",
         admin_only=True, inline=True, privileges=(on_cluster("replSetGetConfig"),),
         fields=(boolean("commitmentStatus"),
                 ignored("includeNewlyAdded", "a member of one is never newly added")))
def repl_set_get_config(ctx: CommandContext, args: Args) -> dict:
    reply: dict[str, Any] = {"config": _member(ctx).stored_config()}
    if args.commitment_status:
        reply["commitmentStatus"] = True
    return reply


@command("replSetStepDown", help="Step down as primary.  Will not step down if there is no secondary "
                                 "which is up-to-date.",
         admin_only=True, privileges=(on_cluster("replSetStateChange"),),
         fields=(value("secondaryCatchUpPeriodSecs"), boolean("force")))
def repl_set_step_down(ctx: CommandContext, args: Args) -> dict:
    member = _member(ctx)
    seconds = _seconds("replSetStepDown", args.value, "replSetStepDown") if args.value is not True else 60.0
    seconds = seconds or 60.0  # mongod: 0 means the default
    given = args.secondary_catch_up_period_secs
    catch_up = ((0.0 if args.force else 10.0) if given is None else
                _seconds("replSetStepDown", given, "secondaryCatchUpPeriodSecs"))
    if catch_up < 0:
        raise CommandError(ErrorCode.BadValue, "secondaryCatchUpPeriodSecs period must be a non-negative duration")
    if seconds < catch_up:
        raise CommandError(ErrorCode.BadValue, "stepdown period must be longer than secondaryCatchUpPeriodSecs")
    member.step_down(seconds, catch_up, args.force)
    return {}


@command("replSetFreeze", help="{ replSetFreeze : <seconds> }'freeze' state of member to the extent we "
                               "can do that.  What this really means is that\nthis node will not attempt to "
                               "become primary until the time period specified expires.\nYou can call again "
                               "with {replSetFreeze:0} to unfreeze sooner.\nA process restart unfreezes the "
                               "member also.\n\nhttp://dochub.mongodb.org/core/replicasetcommands",
         admin_only=True, privileges=(on_cluster("replSetStateChange"),))
def repl_set_freeze(ctx: CommandContext, args: Args) -> dict:
    member = _member(ctx)
    return member.freeze(int(_seconds("replSetFreeze", args.value, "replSetFreeze")))


@command("replSetMaintenance", help="{ replSetMaintenance : bool }\nEnable or disable maintenance mode.",
         admin_only=True, privileges=(on_cluster("replSetStateChange"),))
def repl_set_maintenance(ctx: CommandContext, args: Args) -> dict:
    member = _member(ctx)
    if not isinstance(args.value, (bool, int, float)):
        raise CommandError(ErrorCode.TypeMismatch,
                           f"BSON field 'replSetMaintenance' is the wrong type '{type_name(args.value)}', expected "
                           "types '[bool, long, int, decimal, double]'")
    return member.maintenance(bool(args.value))


@command("replSetReconfig", help="Adjust configuration of a replica set\n{ replSetReconfig : config_object }",
         admin_only=True, privileges=(on_cluster("replSetConfigure"),),
         fields=(boolean("force"),))
def repl_set_reconfig(ctx: CommandContext, args: Args) -> dict:
    member = _member(ctx)
    if not isinstance(args.value, Mapping):
        raise CommandError(ErrorCode.TypeMismatch,
                           f"BSON field 'replSetReconfig' is the wrong type '{type_name(args.value)}', expected "
                           "type 'object'")
    return member.reconfig(args.value, bool(args.force))


@command("replSetUpdatePosition", help="Internal command to update replication progress",
         admin_only=True, privileges=(on_cluster("internal"),),
         fields=(value("optimes"),))
def repl_set_update_position(ctx: CommandContext, args: Args) -> dict:
    """A secondary's applied position (mongod's shape: {optimes: [{appliedOpTime, durableOpTime,
    memberId, cfgver}]}); the primary's majority commit point moves with it."""
    member = _member(ctx)
    optimes = args.cmd.get("optimes")
    if not isinstance(optimes, list):
        raise CommandError(ErrorCode.TypeMismatch,
                           "BSON field 'replSetUpdatePosition.optimes' is the wrong type, expected type 'array'")
    for entry in optimes:
        if not isinstance(entry, Mapping) or not isinstance((entry.get("appliedOpTime") or {}).get("ts"), Timestamp):
            raise CommandError(ErrorCode.NoSuchKey, "Missing expected field \"appliedOpTime\"")
        member.update_position(int(entry.get("memberId", -1)), entry["appliedOpTime"]["ts"])
    return {}


def _check_host_and_port(target: str) -> None:
    """mongod's HostAndPort parse of a `host[:port]` string (FailedToParse, BadValue)."""
    host, sep, port = target.rpartition(":") if not target.endswith("]") else ("", "", "")
    if not sep:
        host, port = target, ""
    if not host.strip("[]"):
        raise CommandError(ErrorCode.FailedToParse, f'Empty host component parsing HostAndPort from "{target}"')
    if sep:
        if not port.isdigit():
            raise CommandError(ErrorCode.FailedToParse,
                               f'Port number "{port}" is not a number parsing HostAndPort from "{target}"')
        if not 0 < int(port) <= 65535:
            raise CommandError(ErrorCode.BadValue,
                               f"Port number {port} out of range parsing HostAndPort from \"{target}\"")


@command("replSetSyncFrom", help='{ replSetSyncFrom : "host:port" }\nChange who we sync from.',
         admin_only=True, privileges=(on_cluster("replSetStateChange"),))
def repl_set_sync_from(ctx: CommandContext, args: Args) -> dict:
    """mongod's reply: {syncFromRequested, prevSyncTarget (when it had one), warning (when the
    target is more than 10 s behind)}; the member then pulls from that member."""
    target = args.value
    if not isinstance(target, str):
        raise CommandError(ErrorCode.TypeMismatch,
                           f'"replSetSyncFrom" had the wrong type. Expected string, found {type_name(target)}')
    _check_host_and_port(target)
    member = _member(ctx)
    sync_from = getattr(member, "sync_from", None)
    if sync_from is not None:
        return dict(sync_from(target))
    # a set of one: its only member is itself
    if member.is_primary:
        raise CommandError(ErrorCode.NotSecondary, "primaries don't sync")
    if any(host_port(m["host"]) == host_port(target) for m in (member.config or {}).get("members", [])):
        raise CommandError(ErrorCode.InvalidOptions, "I cannot sync from myself")
    raise CommandError(ErrorCode.NodeNotFound, f'Could not find member "{target}" in replica set')
