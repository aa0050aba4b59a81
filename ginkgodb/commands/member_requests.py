"""What a replica-set member does around every command, as mongod does on a member:

- before: take the client's `$clusterTime` (gossip advances the logical clock), refuse what a
  node that is not primary may not run (writes: 10107 NotWritablePrimary; reads without
  secondaryOk: 13435 NotPrimaryNoSecondaryOk), and honour `readConcern` (`afterClusterTime`
  waits until every write stamped at or before that time has committed; `linearizable` needs
  the primary);
- after: `$clusterTime` and `operationTime` on every reply, `electionId` and `opTime` on the
  replies of insert, update and delete.

A standalone (and the embedded client) does none of this: it has no cluster time.
"""
from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Mapping
from typing import Any, Optional

from bson.binary import Binary
from bson.int64 import Int64
from bson.timestamp import Timestamp

from ..bsonutil.types import is_number_instance as is_number
from ..errors import CommandError, ErrorCode
from .context import CommandContext
from .replica_set import MemberState, ReplicaSetMember, election_id

#: commands a node that is not primary never runs (mongod's AllowedOnSecondary::kNever)
PRIMARY_ONLY = frozenset({
    "insert", "update", "delete", "findAndModify", "findandmodify", "create", "drop", "dropDatabase",
    "createIndexes", "dropIndexes", "deleteIndexes", "renameCollection", "collMod", "convertToCapped",
    "cloneCollectionAsCapped", "commitTransaction", "abortTransaction",
})
#: reads a node that is not primary serves only with secondaryOk (AllowedOnSecondary::kOptIn)
SECONDARY_OK_READS = frozenset({
    "find", "aggregate", "count", "distinct", "listCollections", "listIndexes", "dbStats", "collStats",
    "dataSize", "explain", "listDatabases", "validate",
})
_WRITE_REPLIES = frozenset({"insert", "update", "delete"})
#: mongod's NotPrimaryError and ShutdownError categories: their error replies carry the
#: topologyVersion, so a driver can tell a stale error from news about the topology
_STATE_CHANGE_CODES = frozenset({ErrorCode.NotWritablePrimary, ErrorCode.NotPrimaryNoSecondaryOk,
                                 ErrorCode.NotPrimaryOrSecondary, ErrorCode.InterruptedDueToReplStateChange,
                                 ErrorCode.PrimarySteppedDown, ErrorCode.ShutdownInProgress,
                                 ErrorCode.InterruptedAtShutdown})
_ZERO_SIGNATURE = {"hash": Binary(b"\x00" * 20, 0), "keyId": Int64(0)}
#: mongod's maxAcceptableLogicalClockDriftSecs: gossip further ahead of the wall clock is refused
MAX_CLOCK_DRIFT_SECS = 365 * 24 * 60 * 60


# ---------------------------------------------------------------------- before the command
def before_command(ctx: CommandContext, member: ReplicaSetMember, name: str, cmd: Mapping[str, Any]) -> None:
    if member.initialized:
        _take_gossip(member, cmd.get("$clusterTime"))
    _check_can_serve(member, name, cmd)
    rc = cmd.get("readConcern")
    if isinstance(rc, Mapping) and member.initialized:
        if rc.get("level") == "linearizable" and not member.is_primary:
            raise CommandError(ErrorCode.NotWritablePrimary,
                               "cannot satisfy linearizable read concern on non-primary node")
        if rc.get("level") == "majority":
            member.wait_for_majority_read(ctx.deadline)
        target = rc.get("afterClusterTime")
        if target is not None:
            if not isinstance(target, Timestamp):
                raise CommandError(ErrorCode.TypeMismatch,
                                   "BSON field 'afterClusterTime' is the wrong type, expected type 'timestamp'")
            wait_for_cluster_time(member.engine, target, ctx.deadline)


def _take_gossip(member: ReplicaSetMember, gossip: Any) -> None:
    """A client's `$clusterTime` moves the clock forward (no keys yet: signatures are not
    checked, as on a mongod without authentication)."""
    if gossip is None:
        return
    if not isinstance(gossip, Mapping) or not isinstance(gossip.get("clusterTime"), Timestamp):
        raise CommandError(ErrorCode.TypeMismatch, "'$clusterTime' must be an object with a 'clusterTime' timestamp")
    ts = gossip["clusterTime"]
    if ts.time > time.time() + MAX_CLOCK_DRIFT_SECS:
        raise CommandError(ErrorCode.ClusterTimeFailsRateLimiter,
                           f"New cluster time, {ts.time}, is too far from this node's wall clock time, "
                           f"{int(time.time())}.")
    member.engine.clock.seed(ts)


def _secondary_ok(cmd: Mapping[str, Any]) -> bool:
    pref = cmd.get("$readPreference")
    if isinstance(pref, Mapping):
        return pref.get("mode", "primary") != "primary"
    return False


def _check_can_serve(member: ReplicaSetMember, name: str, cmd: Mapping[str, Any]) -> None:
    if member.is_primary or cmd.get("$db") == "local":
        return
    if name in PRIMARY_ONLY:
        raise CommandError(ErrorCode.NotWritablePrimary, "not primary")
    if name in SECONDARY_OK_READS:
        if not _secondary_ok(cmd):
            raise CommandError(ErrorCode.NotPrimaryNoSecondaryOk, "not primary and secondaryOk=false")
        if member.state is not MemberState.SECONDARY:
            raise CommandError(ErrorCode.NotPrimaryOrSecondary, "node is not in primary or recovering state")


# ---------------------------------------------------------------------- afterClusterTime
class CommitTracker:
    """The newest commit timestamp of an engine (an engine observer), so a read that must see
    a cluster time knows whether a write stamped before it may still be committing."""

    def __init__(self) -> None:
        self.latest = Timestamp(0, 0)
        self._lock = threading.Lock()

    def before_commit(self, batch: Any) -> None:
        pass

    def after_commit(self, batch: Any) -> None:
        ts = getattr(batch, "commit_ts", None)
        if isinstance(ts, Timestamp):
            self.reached(ts)

    def reached(self, ts: Timestamp) -> None:
        with self._lock:
            if ts > self.latest:
                self.latest = ts


_TRACKERS: weakref.WeakKeyDictionary[Any, CommitTracker] = weakref.WeakKeyDictionary()
_TRACKERS_LOCK = threading.Lock()


def commit_tracker(engine: Any) -> CommitTracker:
    with _TRACKERS_LOCK:
        tracker = _TRACKERS.get(engine)
        if tracker is None:
            tracker = _TRACKERS[engine] = CommitTracker()
            engine.observers.append(tracker)
        return tracker


def track_commits(engine: Any) -> None:
    """Start tracking commit times (the server does it at start, before any write)."""
    commit_tracker(engine)


def wait_for_cluster_time(engine: Any, target: Timestamp, deadline: Optional[float]) -> None:
    """Return once every write stamped at or before `target` is committed (mongod's
    afterClusterTime); a time the clock has not reached is refused as mongod refuses it."""
    tracker = commit_tracker(engine)
    if tracker.latest >= target:
        return
    current = engine.clock.now()
    if target > current:
        raise CommandError(ErrorCode.InvalidOptions,
                           "readConcern afterClusterTime value must not be greater than the current "
                           f"clusterTime. Requested clusterTime: {_ts_text(target)}; current clusterTime: "
                           f"{_ts_text(current)}")
    # A batch stamped before `target` commits under the writer lock: once the lock is free, it
    # has committed (or aborted, leaving nothing to see). The clock has passed `target`, so every
    # later commit is stamped after it: mongod's no-op write, without the write.
    timeout = -1.0 if deadline is None else max(deadline - time.monotonic(), 0.0)
    if not engine.lock.acquire(timeout=timeout):
        raise CommandError(ErrorCode.MaxTimeMSExpired, "operation exceeded time limit")
    engine.lock.release()
    tracker.reached(target)


def _ts_text(ts: Timestamp) -> str:
    return f"Timestamp({ts.time}, {ts.inc})"


# ---------------------------------------------------------------------- after the command
def unsatisfied_write_concern(member: ReplicaSetMember, cmd: Mapping[str, Any], reply: dict) -> None:
    """`w` above the members that bear data: as mongod, the write is done and the reply carries
    a writeConcernError (100 UnsatisfiableWriteConcern). A member of several waits for the
    secondaries' positions (replicated_member.py)."""
    if member.wait_for_replication(cmd, reply):
        return
    wc = cmd.get("writeConcern")
    if not isinstance(wc, Mapping):
        return
    w: Any = wc.get("w")
    if (member.initialized and reply.get("ok") == 1.0 and "writeConcernError" not in reply
            and is_number(w) and not isinstance(w, bool) and w > 1):
        reply["writeConcernError"] = {"code": int(ErrorCode.UnsatisfiableWriteConcern),
                                      "codeName": "UnsatisfiableWriteConcern",
                                      "errmsg": "Not enough data-bearing nodes",
                                      "errInfo": {"writeConcern": dict(wc)}}


def decorate_reply(ctx: CommandContext, member: ReplicaSetMember, name: str, reply: dict) -> dict:
    """The member's fields on a reply (in place; returns it)."""
    if not member.initialized:
        if reply.get("ok") != 1.0 and reply.get("code") in _STATE_CHANGE_CODES:
            reply["topologyVersion"] = member.watch.version()
        return reply
    now = member.engine.clock.now()
    if reply.get("ok") != 1.0 and reply.get("code") in _STATE_CHANGE_CODES:
        reply["topologyVersion"] = member.watch.version()
    if name in _WRITE_REPLIES and reply.get("ok") == 1.0 and member.is_primary:
        _insert_after(reply, "n", {"electionId": election_id(member.term), "opTime": member.optime(now)})
    reply["$clusterTime"] = {"clusterTime": now, "signature": dict(_ZERO_SIGNATURE)}
    reply["operationTime"] = now
    return reply


def _insert_after(reply: dict, key: str, fields: dict) -> None:
    if key not in reply:
        reply.update(fields)
        return
    items = list(reply.items())
    reply.clear()
    for k, v in items:
        reply[k] = v
        if k == key:
            reply.update(fields)
