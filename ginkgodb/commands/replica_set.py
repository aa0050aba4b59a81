"""A replica set of one: the member's configuration, state, term and what hello reports.

`ginkgodb serve --replSet <name>` makes the server a member of that set, uninitialized until
`replSetInitiate` writes the configuration to `local.system.replset` (where mongod keeps it, so
it survives restarts); the term lives in `local.replset.election`. A one-member set elects
itself at once: after initiate, and at every start with a stored configuration (the term grows
by one each time, and with it the electionId). `replSetStepDown` makes it a secondary until its
step-down period ends; then it elects itself again. Every change of state moves the topology
version (commands/topology.py), which wakes awaitable hellos.

The last write's optime comes from `last_write_time`, the one place that reads it.
"""
from __future__ import annotations

import datetime
import enum
import socket
import threading
import time
from collections.abc import Mapping
from typing import Any, Optional

import bson
from bson.int64 import Int64
from bson.objectid import ObjectId
from bson.raw_bson import RawBSONDocument
from bson.timestamp import Timestamp

from ..engine import DeleteStatement, FindRequest, UpdateStatement
from ..errors import CommandError, ErrorCode
from .topology import TopologyWatch

CONFIG_DB, CONFIG_COLL, ELECTION_COLL = "local", "system.replset", "replset.election"
DEFAULT_PORT = 27017

#: the settings mongod fills in when a configuration leaves them out (7.0)
DEFAULT_SETTINGS: dict[str, Any] = {
    "chainingAllowed": True, "heartbeatIntervalMillis": 2000, "heartbeatTimeoutSecs": 10,
    "electionTimeoutMillis": 10000, "catchUpTimeoutMillis": -1, "catchUpTakeoverDelayMillis": 30000,
    "getLastErrorModes": {}, "getLastErrorDefaults": {"w": 1, "wtimeout": 0},
}
_MEMBER_FIELDS = ("_id", "host", "arbiterOnly", "buildIndexes", "hidden", "priority", "tags",
                  "secondaryDelaySecs", "votes")
_CONFIG_FIELDS = ("_id", "version", "term", "members", "protocolVersion", "writeConcernMajorityJournalDefault",
                  "settings", "configsvr")
NO_CONFIG_INFO = "Does not have a valid replica set config"


class MemberState(enum.IntEnum):
    """mongod's member states (the ones a member of one can be in)."""

    STARTUP = 0
    PRIMARY = 1
    SECONDARY = 2
    RECOVERING = 3
    STARTUP2 = 5
    REMOVED = 10

    @property
    def label(self) -> str:
        return self.name


def last_write_time(engine: Any) -> Timestamp:
    """The optime of the newest committed write: the logical clock until the oplog says it."""
    oplog = getattr(engine, "oplog", None)
    latest = getattr(oplog, "last_timestamp", None)
    if callable(latest):
        ts = latest()
        if isinstance(ts, Timestamp):
            return ts
    return engine.clock.now()


def election_id(term: int) -> ObjectId:
    """mongod's electionId for a term: 0x7fffffff then the term as 8 big-endian bytes."""
    return ObjectId(b"\x7f\xff\xff\xff" + int(term).to_bytes(8, "big"))


def _date(ts: Timestamp) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(ts.time, datetime.UTC)


class ReplicaSetMember:
    """The one member of a replica set: thread-safe; commands read it through `ctx.server`."""

    def __init__(self, engine: Any, set_name: str, host: str, watch: TopologyWatch,
                 local_names: tuple[str, ...] = ()) -> None:
        self.engine = engine
        self.set_name = set_name
        self.me = host
        self.watch = watch
        watch.replica_set = True
        self.port = int(host.rsplit(":", 1)[1]) if ":" in host else DEFAULT_PORT
        self._local_names = {"localhost", "127.0.0.1", "::1", "0.0.0.0", socket.gethostname(),
                             socket.getfqdn(), *local_names}
        self._lock = threading.RLock()
        self.started = time.time()
        self.config: Optional[dict] = None
        self.state = MemberState.STARTUP
        self.term = 0
        self.election_ts: Optional[Timestamp] = None
        self.election_date: Optional[datetime.datetime] = None
        self.step_down_until = 0.0        # monotonic: no self-election before this
        self._timer: Optional[threading.Timer] = None
        self.warnings: list[str] = []

    # ------------------------------------------------------------------ start-up
    def load(self) -> None:
        """Read a stored configuration; a valid one for this set name elects this member."""
        stored = _find_one(self.engine, CONFIG_COLL, {})
        if stored is None:
            return
        if stored.get("_id") != self.set_name:
            self.warnings.append(
                f"Local replica set configuration document reports set name of {stored.get('_id')}, but "
                f"command line reports {self.set_name}; waiting for reconfig or remote heartbeat")
            with self._lock:
                self.config = stored
                self.state = MemberState.REMOVED
            return
        hosts = [m.get("host", "") for m in stored.get("members", []) if isinstance(m, Mapping)]
        if not any(self._maps_to_me(h) for h in hosts if isinstance(h, str)):
            self.warnings.append(
                "Locally stored replica set configuration does not have a valid entry for the current node; "
                f"waiting for reconfig or remote heartbeat (configured: {', '.join(map(str, hosts))}; this node: "
                f"{self.me})")
            with self._lock:
                self.config = stored
                self.state = MemberState.REMOVED
            return
        election = _find_one(self.engine, ELECTION_COLL, {}) or {}
        with self._lock:
            self.config = stored
            self.me = self.my_member().get("host", self.me)
            self.term = max(int(election.get("term", 0)), int(stored.get("term", 0)))
            self._elect("electionTimeout")

    # ------------------------------------------------------------------ facts
    @property
    def initialized(self) -> bool:
        return self.config is not None and self.state is not MemberState.REMOVED

    @property
    def is_primary(self) -> bool:
        return self.state is MemberState.PRIMARY

    def hosts(self) -> list[str]:
        return [m["host"] for m in (self.config or {}).get("members", [])]

    def my_member(self) -> dict:
        return (self.config or {}).get("members", [{}])[0]

    def optime(self, ts: Optional[Timestamp] = None) -> dict:
        return {"ts": ts if ts is not None else last_write_time(self.engine), "t": Int64(self.term)}

    def _hello_start(self, primary_key: str) -> dict:
        """hello's first field, and for a member not yet initiated all of them (under the lock)."""
        out: dict[str, Any] = {"topologyVersion": self.watch.version()}
        if not self.initialized:
            out.update({primary_key: False, "secondary": False, "info": NO_CONFIG_INFO, "isreplicaset": True})
        return out

    def hello_fields(self, legacy: bool) -> dict:
        """The replica-set part of hello, in mongod's order (before the common fields)."""
        primary_key = "ismaster" if legacy else "isWritablePrimary"
        with self._lock:
            out = self._hello_start(primary_key)
            if not self.initialized:
                return out
            assert self.config is not None
            out.update({"hosts": self.hosts(), "setName": self.set_name,
                        "setVersion": self.config.get("version", 1),
                        primary_key: self.is_primary, "secondary": self.state is MemberState.SECONDARY})
            if self.is_primary:
                out["primary"] = self.me
            out["me"] = self.me
            if self.is_primary:
                out["electionId"] = election_id(self.term)
            ts = last_write_time(self.engine)
            out["lastWrite"] = {"opTime": self.optime(ts), "lastWriteDate": _date(ts),
                                "majorityOpTime": self.optime(ts), "majorityWriteDate": _date(ts)}
            tags = self.my_member().get("tags") or {}
            if tags:
                out["tags"] = dict(tags)
            return out

    # ------------------------------------------------------------------ initiate
    def _initial_config(self, requested: Optional[Mapping]) -> tuple[dict, dict]:
        """replSetInitiate's checks, the same for a set of one and of several (under the lock):
        (the validated configuration, the reply's extra fields)."""
        if self.config is not None:
            raise CommandError(ErrorCode.AlreadyInitialized, "already initialized",
                               info={"info": "try querying local.system.replset to see current "
                                             "configuration"})
        reply: dict[str, Any] = {}
        if not requested:
            reply = {"info2": "no configuration specified. Using a default configuration for the set",
                     "me": self.me}
            requested = {"_id": self.set_name, "version": 1, "members": [{"_id": 0, "host": self.me}]}
        return self._validated(requested), reply

    def initiate(self, requested: Optional[Mapping]) -> dict:
        """replSetInitiate: validate, store, elect. Returns the reply's extra fields."""
        with self._lock:
            config, reply = self._initial_config(requested)
            config["term"] = 1
            self.term = 0
            _write(self.engine, CONFIG_COLL, config)
            self.config = config
            self.me = config["members"][0]["host"]  # mongod names itself as its configuration does
            self._elect("electionTimeout")
            return reply

    def _validated(self, requested: Mapping) -> dict:
        """The configuration as mongod stores it, or mongod's error for a bad one."""
        for key in requested:
            if key not in _CONFIG_FIELDS:
                raise CommandError(ErrorCode.IDLUnknownField, f"BSON field 'ReplSetConfig.{key}' is an unknown field.")
        name = requested.get("_id")
        if name is None:
            raise CommandError(ErrorCode.IDLFailedToParse,
                               "BSON field 'ReplSetConfig._id' is missing but a required field")
        if not isinstance(name, str):
            raise CommandError(ErrorCode.TypeMismatch,
                               "BSON field 'ReplSetConfig._id' is the wrong type, expected type 'string'")
        if name != self.set_name:
            raise CommandError(ErrorCode.InvalidReplicaSetConfig,
                               f"Attempting to initiate a replica set with name {name}, but command line "
                               f"reports {self.set_name}; rejecting")
        if requested.get("configsvr"):
            raise CommandError(ErrorCode.NotImplemented,
                               "replSetInitiate with 'configsvr' is not supported by ginkgodb: there is no "
                               "sharding")
        version = requested.get("version", 1)
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise CommandError(ErrorCode.InvalidReplicaSetConfig,
                               f"version field value of {version} is out of range")
        members = requested.get("members")
        if members is None:
            raise CommandError(ErrorCode.IDLFailedToParse,
                               "BSON field 'ReplSetConfig.members' is missing but a required field")
        if not isinstance(members, list) or not all(isinstance(m, Mapping) for m in members):
            raise CommandError(ErrorCode.TypeMismatch,
                               "BSON field 'ReplSetConfig.members' is the wrong type, expected type 'array'")
        if not members:
            raise CommandError(ErrorCode.InvalidReplicaSetConfig,
                               "Replica set configuration must contain at least one non-arbiter member "
                               "with priority > 0")
        checked = self._members(members, name, version)
        settings = dict(DEFAULT_SETTINGS)
        given = requested.get("settings") or {}
        if not isinstance(given, Mapping):
            raise CommandError(ErrorCode.TypeMismatch,
                               "BSON field 'ReplSetConfig.settings' is the wrong type, expected type 'object'")
        settings.update(given)
        settings["replicaSetId"] = ObjectId()
        return {"_id": name, "version": version, "term": 0, "members": checked,
                "protocolVersion": Int64(1),
                "writeConcernMajorityJournalDefault": bool(requested.get("writeConcernMajorityJournalDefault", True)),
                "settings": settings}

    def _members(self, members: list, set_name: str, version: int) -> list[dict]:
        """The configuration's members as stored; a set of one here (replicated_member.py: more)."""
        if len(members) > 1:
            raise CommandError(ErrorCode.NotImplemented,
                               "a replica set of several members needs `ginkgodb serve --replSet NAME --etcd "
                               f"URL` on each member: this server was started without --etcd, so a configuration "
                               f"with {len(members)} members cannot be served")
        return [self._member(members[0], set_name, version)]

    def _member(self, given: Mapping, set_name: str, version: int) -> dict:
        for key in given:
            if key not in _MEMBER_FIELDS and key not in ("slaveDelay", "newlyAdded"):
                raise CommandError(ErrorCode.IDLUnknownField, f"BSON field 'MemberConfig.{key}' is an unknown field.")
        for key in ("_id", "host"):
            if key not in given:
                raise CommandError(ErrorCode.IDLFailedToParse,
                                   f"BSON field 'MemberConfig.{key}' is missing but a required field")
        host = given["host"]
        if not isinstance(host, str):
            raise CommandError(ErrorCode.TypeMismatch,
                               "BSON field 'MemberConfig.host' is the wrong type, expected type 'string'")
        if not self._maps_to_me(host):
            raise CommandError(ErrorCode.NodeNotFound,
                               f"No host described in new configuration with {{version: {version}, term: 0}} for "
                               f"replica set {set_name} maps to this node")
        if given.get("arbiterOnly") or given.get("priority", 1) == 0 or given.get("votes", 1) == 0:
            raise CommandError(ErrorCode.NotImplemented,
                               "ginkgodb's one member must be an electable voter (no arbiterOnly, priority 0 "
                               "or votes 0)")
        tags = given.get("tags") or {}
        if not isinstance(tags, Mapping) or not all(isinstance(v, str) for v in tags.values()):
            raise CommandError(ErrorCode.TypeMismatch, "tags field value must be a document of strings")
        return {"_id": given["_id"], "host": host, "arbiterOnly": False,
                "buildIndexes": bool(given.get("buildIndexes", True)), "hidden": bool(given.get("hidden", False)),
                "priority": given.get("priority", 1), "tags": dict(tags),
                "secondaryDelaySecs": Int64(given.get("secondaryDelaySecs", 0)), "votes": 1}

    def _maps_to_me(self, host: str) -> bool:
        name, _, port = host.rpartition(":") if ":" in host else (host, "", str(DEFAULT_PORT))
        if not name:
            name, port = host, str(DEFAULT_PORT)
        name = name.strip("[]")
        try:
            return int(port) == self.port and name.lower() in {n.lower() for n in self._local_names}
        except ValueError:
            return False

    # ------------------------------------------------------------------ elections
    def _elect(self, reason: str) -> None:
        """Win an election of one (under the lock): a new term, a new electionId."""
        self.term += 1
        self.state = MemberState.PRIMARY
        self.election_ts = self.engine.clock.now()
        self.election_date = datetime.datetime.now(datetime.UTC)
        self.election_reason = reason
        _write(self.engine, ELECTION_COLL, {"_id": "election", "term": Int64(self.term),
                                            "candidateIndex": Int64(0)})
        if self.config is not None and self.config.get("term") != self.term:
            self.config = {**self.config, "term": self.term}
            _write(self.engine, CONFIG_COLL, self.config)
        self.watch.changed()

    def step_down(self, seconds: float, catch_up: float, force: bool) -> None:
        """replSetStepDown on a member of one: no secondary can catch up, so without `force` it
        waits `catch_up` seconds and fails as mongod does; with it, steps down for `seconds`."""
        with self._lock:
            if not self.is_primary:
                raise CommandError(ErrorCode.NotWritablePrimary, "not primary so can't step down")
        time.sleep(catch_up)  # waiting for a secondary to catch up: there is none
        if not force:
            when = datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")
            raise CommandError(ErrorCode.ExceededTimeLimit,
                               f"No electable secondaries caught up as of {when}. Please use the "
                               "replSetStepDown command with the argument {force: true} to force node to "
                               "step down.")
        with self._lock:
            self.state = MemberState.SECONDARY
            self._hold(seconds)
            self.watch.changed()

    #: replSetMaintenance calls still holding the member in RECOVERING (mongod's counter), and
    #: the state the oplog sync last reported (a too-stale member stays RECOVERING after them)
    maintenance_calls = 0
    sync_state = "SECONDARY"

    def maintenance(self, activate: bool) -> dict:
        """replSetMaintenance: RECOVERING (no reads, not electable; the oplog still applied)
        while any `true` call is not matched by a `false` one."""
        with self._lock:
            if self.is_primary:
                raise CommandError(ErrorCode.NotSecondary, "primaries can't modify maintenance mode")
            if self.state is MemberState.STARTUP2:
                raise CommandError(ErrorCode.NotSecondary, "initial sync in progress")
            if activate:
                self.maintenance_calls += 1
            elif self.maintenance_calls:
                self.maintenance_calls -= 1
            else:
                raise CommandError(ErrorCode.OperationFailed, "already out of maintenance mode")
            if self.state in (MemberState.SECONDARY, MemberState.RECOVERING):
                self.state = MemberState.RECOVERING if self.maintenance_calls else MemberState[self.sync_state]
        self.watch.changed()
        return {}

    def freeze(self, seconds: int) -> dict:
        """replSetFreeze: only a secondary can be frozen; 0 unfreezes (and a member of one then
        elects itself at once)."""
        with self._lock:
            if self.is_primary:
                raise CommandError(ErrorCode.NotSecondary,
                                   "cannot freeze node when primary or running for election. state: Primary")
            if seconds == 0:
                self._cancel_timer()
                if self.state is MemberState.SECONDARY:
                    self._elect("stepUpRequestSkipDryRun")
                return {"info": "unfreezing"}
            self._hold(seconds)
            return {"warning": "you really want to freeze for only 1 second?"} if seconds == 1 else {}

    def _hold(self, seconds: float) -> None:
        """No self-election for `seconds` (step-down period, freeze)."""
        self._cancel_timer()
        self.step_down_until = time.monotonic() + seconds
        timer = threading.Timer(max(seconds, 0.0), self._hold_ended)
        timer.daemon = True
        self._timer = timer
        timer.start()

    def _hold_ended(self) -> None:
        with self._lock:
            self._timer = None
            if self.state is MemberState.SECONDARY:
                self._elect("electionTimeout")

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def close(self) -> None:
        with self._lock:
            self._cancel_timer()

    def wait_for_replication(self, cmd: Mapping[str, Any], reply: dict) -> bool:
        """A write's write concern after it ran; False: nothing to wait for here (a set of one
        has no other member: member_requests reports a `w` above one)."""
        return False

    def reconfig(self, requested: Mapping, force: bool) -> dict:
        """replSetReconfig: a set of one keeps the configuration it was initiated with."""
        raise CommandError(ErrorCode.NotImplemented,
                           "replSetReconfig needs a replica set of several members (`ginkgodb serve --replSet NAME "
                           "--etcd URL`): a replica set of one keeps the configuration it was initiated with")

    def wait_for_majority_read(self, deadline: Optional[float]) -> None:
        """readConcern majority: on a set of one every committed write is majority-committed."""

    def update_position(self, member_id: int, ts: Timestamp) -> None:
        """replSetUpdatePosition: a set of one has no secondary that sends it."""
        raise CommandError(ErrorCode.InvalidReplicaSetConfig,
                           f"Received replSetUpdatePosition for node with memberId {member_id} which doesn't exist "
                           "in our config")

    # ------------------------------------------------------------------ status documents
    def status(self) -> dict:
        """replSetGetStatus of a member of one."""
        with self._lock:
            ts = last_write_time(self.engine)
            now = datetime.datetime.now(datetime.UTC)
            op, wall = self.optime(ts), _date(ts)
            null_optime = {"ts": Timestamp(0, 0), "t": Int64(-1)}
            member: dict[str, Any] = {
                "_id": self.my_member().get("_id", 0), "name": self.me, "health": 1.0,
                "state": int(self.state), "stateStr": self.state.label,
                "uptime": int(time.time() - self.started), "optime": op, "optimeDate": wall,
                "lastAppliedWallTime": wall, "lastDurableWallTime": wall,
                "syncSourceHost": "", "syncSourceId": -1, "infoMessage": "",
            }
            if self.is_primary and self.election_ts is not None:
                member["electionTime"] = self.election_ts
                member["electionDate"] = self.election_date
            member.update({"configVersion": (self.config or {}).get("version", 1),
                           "configTerm": self.term, "self": True, "lastHeartbeatMessage": ""})
            out: dict[str, Any] = {
                "set": self.set_name, "date": now, "myState": int(self.state), "term": Int64(self.term),
                "syncSourceHost": "", "syncSourceId": -1, "heartbeatIntervalMillis": Int64(2000),
                "majorityVoteCount": 1, "writeMajorityCount": 1, "votingMembersCount": 1,
                "writableVotingMembersCount": 1,
                "optimes": {"lastCommittedOpTime": op, "lastCommittedWallTime": wall,
                            "readConcernMajorityOpTime": op, "appliedOpTime": op, "durableOpTime": op,
                            "lastAppliedWallTime": wall, "lastDurableWallTime": wall},
                "lastStableRecoveryTimestamp": ts,
            }
            if self.is_primary and self.election_ts is not None:
                out["electionCandidateMetrics"] = {
                    "lastElectionReason": self.election_reason, "lastElectionDate": self.election_date,
                    "electionTerm": Int64(self.term), "lastCommittedOpTimeAtElection": null_optime,
                    "lastSeenOpTimeAtElection": {"ts": self.election_ts, "t": Int64(self.term - 1)},
                    "numVotesNeeded": 1, "priorityAtElection": float(self.my_member().get("priority", 1)),
                    "electionTimeoutMillis": Int64(10000), "newTermStartDate": self.election_date,
                    "wMajorityWriteAvailabilityDate": self.election_date}
            out["members"] = [member]
            return out

    def stored_config(self) -> dict:
        with self._lock:
            assert self.config is not None
            return {k: self.config[k] for k in _CONFIG_FIELDS if k in self.config}


# ---------------------------------------------------------------------- storage (local database)
def _find_one(engine: Any, coll: str, filt: dict) -> Optional[dict]:
    cursor = engine.find(CONFIG_DB, coll, FindRequest(filter=filt, limit=1))
    try:
        batch = cursor.next_batch(1)
    finally:
        cursor.close()
    if not batch:
        return None
    doc = batch[0]
    return bson.decode(doc.raw) if isinstance(doc, RawBSONDocument) else dict(doc)


def _write(engine: Any, coll: str, doc: dict) -> None:
    """Make `doc` the one document of a local collection."""
    engine.delete(CONFIG_DB, coll, [DeleteStatement({"_id": {"$ne": doc["_id"]}}, 0)])
    outcome = engine.update(CONFIG_DB, coll, [UpdateStatement({"_id": doc["_id"]}, doc, upsert=True)])
    errors = getattr(outcome, "errors", None)
    if errors:
        raise CommandError(ErrorCode.InternalError, f"cannot write {CONFIG_DB}.{coll}: {errors}")


def member_of(ctx: Any) -> Optional[ReplicaSetMember]:
    """The replica-set member this command runs on, or None on a standalone (and embedded)."""
    member = getattr(getattr(ctx, "server", None), "replica_set", None)
    return member if isinstance(member, ReplicaSetMember) else None
