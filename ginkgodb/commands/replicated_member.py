"""A member of a replica set of several servers (`serve --replSet NAME --etcd URL`).

The one-member set's state, term, hello and status documents (replica_set.py) grow here into
mongod's multi-member ones; the work between members is replication's (ginkgodb/repl): the
coordinator holds elections and the primary's lease in etcd, the heartbeats watch the peers, the
oplog sync pulls and applies the primary's oplog, and the positions give the majority commit
point that `w: majority` waits for. Design: docs/design/replication.md.
"""
from __future__ import annotations

import datetime
import time
from collections.abc import Mapping
from typing import Any, Optional

import pymongo
from bson import json_util
from bson.int64 import Int64
from bson.timestamp import Timestamp

from ..errors import CommandError, ErrorCode
from ..repl import Coordinator, NoopWriter, OplogSync, Peers, PeerStatus, Positions, majority_of
from .replica_set import (
    _MEMBER_FIELDS,
    CONFIG_COLL,
    ELECTION_COLL,
    MemberState,
    ReplicaSetMember,
    _date,
    _find_one,
    _write,
    election_id,
)
from .server_parameters import PARAMETERS
from .topology import TopologyWatch

ZERO = Timestamp(0, 0)
_JSON = json_util.CANONICAL_JSON_OPTIONS
#: writes that wait for the set's default write concern (mongod 5.0+: w: "majority")
_WRITES = frozenset({"insert", "update", "delete", "findAndModify", "findandmodify", "commitTransaction",
                     "abortTransaction", "create", "drop", "dropDatabase", "createIndexes", "dropIndexes",
                     "renameCollection", "collMod"})
_STATE_NAMES = {0: "STARTUP", 1: "PRIMARY", 2: "SECONDARY", 3: "RECOVERING", 5: "STARTUP2", 6: "UNKNOWN",
                7: "ARBITER", 8: "(not reachable/healthy)", 9: "ROLLBACK", 10: "REMOVED"}
MAX_VOTERS, MAX_MEMBERS = 7, 50


def _shown(wc: dict, w: Any) -> dict:
    """The write concern as a writeConcernError's errInfo shows it."""
    return {"w": w, "wtimeout": int(wc.get("wtimeout", 0)),
            "provenance": "clientSupplied" if "w" in wc else "implicitDefault"}


def _stepped_down(wc: dict, w: Any) -> dict:
    """The writeConcernError of a write whose member is no longer the primary it committed on."""
    return {"code": int(ErrorCode.PrimarySteppedDown), "codeName": "PrimarySteppedDown",
            "errmsg": "Primary stepped down while waiting for replication",
            "errInfo": {"writeConcern": _shown(wc, w)}}


def host_port(host: str) -> tuple[str, int]:
    """A host string as mongod's HostAndPort compares it (the port defaults to 27017)."""
    name, sep, port = host.rpartition(":")
    if not sep or "]" in port:
        return host.strip("[]").lower(), 27017
    try:
        return name.strip("[]").lower(), int(port)
    except ValueError:
        return host.lower(), -1


def refuse_unsupported_settings(settings: Mapping) -> None:
    """The one place that refuses a configuration's settings ginkgodb does not act on: tag-set
    write concerns (`getLastErrorModes`; a write concern naming a mode then answers 79 as mongod
    does for an unknown mode). Arbiters are refused per member (`_any_member`); chaining is not
    refused: `chainingAllowed` only widens mongod's choice of sync source, and every ginkgodb
    secondary pulls from the primary, which mongod also allows."""
    if settings.get("getLastErrorModes"):
        raise CommandError(ErrorCode.NotImplemented, "settings.getLastErrorModes (write concerns by tag "
                                                     "set) are not supported by ginkgodb yet")


class ReplicatedMember(ReplicaSetMember):
    """A member that replicates: thread-safe; background threads do the replication."""

    def __init__(self, engine: Any, set_name: str, host: str, watch: TopologyWatch,
                 local_names: tuple[str, ...] = (), *, etcd_url: str) -> None:
        super().__init__(engine, set_name, host, watch, local_names)
        self.etcd_url = etcd_url
        self.positions = Positions()
        self.peers = Peers()
        self.sync = OplogSync(engine, self.my_id, self.config_version, self._applied,
                              lambda: float(self.my_member().get("secondaryDelaySecs", 0)), self._sync_state,
                              downstream=self._downstream_positions)
        self.coordinator = Coordinator(etcd_url, self, self.peers)
        self.primary_host: Optional[str] = None
        #: the member replSetSyncFrom named (its configured host): pulled from instead of the
        #: primary while it stays a healthy member that does not pull from this one
        self.forced_source: Optional[str] = None
        #: the newest majority commit point this member has known (it never goes back): change
        #: streams read up to it, as mongod's read majority-committed data
        self._committed_seen = ZERO
        engine.oplog.majority_committed = self.change_stream_horizon
        self.noops = NoopWriter(lambda: self.is_primary and bool(PARAMETERS.value("writePeriodicNoops")),
                                self.last_applied, lambda: engine.oplog.append_noop({"msg": "periodic noop"}))

    # ------------------------------------------------------------------ start-up, configuration
    def load(self) -> None:
        stored = _find_one(self.engine, CONFIG_COLL, {})
        if stored is not None and stored.get("_id") == self.set_name and self._mine(stored) is not None:
            election = _find_one(self.engine, ELECTION_COLL, {}) or {}
            self.term = int(election.get("term", 0))
            self._use_config(stored)
        elif stored is not None:
            super().load()   # another set's, or not naming this node: REMOVED, with mongod's warning
        self.coordinator.start()
        self.noops.start(float(PARAMETERS.value("periodicNoopIntervalSecs")))

    def _mine(self, config: Mapping) -> Optional[dict]:
        for m in config.get("members", []):
            if isinstance(m, Mapping) and isinstance(m.get("host"), str) and self._maps_to_me(m["host"]):
                return dict(m)
        return None

    def _use_config(self, config: dict, initiator: bool = False) -> None:
        """`initiator`: this member ran replSetInitiate, so its data is the set's (never cloned
        over), even when its own coordinator adopted the configuration from etcd a moment before
        initiate wrote the first entry."""
        with self._lock:
            self.config = config
            mine = self._mine(config) or {}
            self.me = mine.get("host", self.me)
            if self.state is not MemberState.PRIMARY and (initiator or self.state is not MemberState.STARTUP2):
                # an empty oplog: nothing of the set's history yet, an initial sync comes first
                empty = self.engine.oplog.last_ts is None and not initiator
                self.state = MemberState.STARTUP2 if empty else MemberState.SECONDARY
            members = config.get("members", [])
            self.peers.configure([(m["_id"], m["host"]) for m in members if m["host"] != self.me])
            self.positions.configure({m["_id"] for m in members if m.get("votes", 1)},
                                     {m["_id"] for m in members if not m.get("arbiterOnly")})
            self.watch.changed()

    def adopt_config(self, config: Any) -> bool:
        """The set's configuration, found in etcd: this member joins when it is named in it, takes
        a newer version (a reconfig), and is REMOVED from a version that no longer names it."""
        if isinstance(config, str):
            config = json_util.loads(config, json_options=_JSON)
        if not isinstance(config, dict) or config.get("_id") != self.set_name:
            return False
        current = self.config
        if current is not None and int(config.get("version", 1)) <= int(current.get("version", 1)):
            return False
        if self._mine(config) is None:
            if current is None:
                return False       # not (yet) a member: keep waiting for a configuration naming it
            self.coordinator.resign()
            self.sync.follow(None)
            _write(self.engine, CONFIG_COLL, config)
            with self._lock:
                self.config = config
                self.state = MemberState.REMOVED
                self.primary_host = None
                self.watch.changed()
            return True
        _write(self.engine, CONFIG_COLL, config)
        self._use_config(config)
        return True

    def reconfig(self, requested: Mapping, force: bool) -> dict:
        """replSetReconfig on the primary (mongosh's rs.add(), rs.remove()): a newer version, at
        most one voting member added or removed, new members answering; stored in etcd, where
        every member reads it."""
        if force:
            raise CommandError(ErrorCode.NotImplemented, "replSetReconfig with force is not supported by ginkgodb")
        with self._lock:
            if not self.is_primary:
                raise CommandError(ErrorCode.NotWritablePrimary,
                                   "replSetReconfig should only be run on a writable PRIMARY. Current state "
                                   f"{self.state.label};")
            current = dict(self.config or {})
            config = self._validated(requested)
            if config["version"] <= int(current.get("version", 1)):
                raise CommandError(ErrorCode.NewReplicaSetConfigurationIncompatible,
                                   f"New replica set configuration version must be greater than old, but "
                                   f"{config['version']} is not greater than {current.get('version', 1)} for "
                                   f"replica set {self.set_name}")
            old_voters = {m["host"] for m in current.get("members", []) if m.get("votes", 1)}
            new_voters = {m["host"] for m in config["members"] if m.get("votes", 1)}
            if len(old_voters ^ new_voters) > 1:
                raise CommandError(ErrorCode.NewReplicaSetConfigurationIncompatible,
                                   "Non force replica set reconfig can only add or remove at most 1 voting member.")
            if self._mine(config) is None:
                raise CommandError(ErrorCode.NodeNotFound,
                                   "No host described in new configuration with {version: "
                                   f"{config['version']}, term: {self.term}}} for replica set {self.set_name} "
                                   "maps to this node")
            settings = dict(config["settings"])
            settings["replicaSetId"] = (current.get("settings") or {}).get("replicaSetId", settings["replicaSetId"])
            config["settings"] = settings
            config["term"] = self.term
            refuse_unsupported_settings(settings)
        known = {m["host"] for m in current.get("members", [])}
        self._quorum_check({"members": [m for m in config["members"] if m["host"] not in known]},
                           "Quorum check failed")
        self.coordinator.replace_config(json_util.dumps(config, json_options=_JSON))
        _write(self.engine, CONFIG_COLL, config)
        self._use_config(config)
        return {}

    def initiate(self, requested: Optional[Mapping]) -> dict:
        with self._lock:
            config, reply = self._initial_config(requested)
            config["term"] = 0
            refuse_unsupported_settings(config["settings"])
        self._quorum_check(config)
        if not self.coordinator.publish_config(json_util.dumps(config, json_options=_JSON)):
            raise CommandError(ErrorCode.AlreadyInitialized, "already initialized",
                               info={"info": f"the replica set {self.set_name} already has a configuration in etcd"})
        _write(self.engine, CONFIG_COLL, config)
        if self.engine.oplog.last_ts is None:     # as mongod: the set's history starts here
            self.engine.oplog.append_noop({"msg": "initiating set"})
        self._use_config(config, initiator=True)
        return reply

    def _quorum_check(self, config: dict, what: str = "replSetInitiate quorum check failed") -> None:
        """mongod's quorum check: every proposed member answers and is not in a set yet."""
        for m in config["members"]:
            if self._maps_to_me(m["host"]):
                continue
            client: pymongo.MongoClient = pymongo.MongoClient(m["host"], directConnection=True,
                                                              serverSelectionTimeoutMS=3000, connectTimeoutMS=2000)
            try:
                hello = client.admin.command("hello")
            except pymongo.errors.PyMongoError as exc:
                reason = str(exc).split(" (configured timeouts")[0].removeprefix(f"{m['host']}: ")
                raise CommandError(ErrorCode.NodeNotFound,
                                   f"{what} because not all proposed set members responded affirmatively: "
                                   f"{m['host']} failed with {reason}") from exc
            finally:
                client.close()
            if hello.get("setName") not in (None, self.set_name) or hello.get("hosts"):
                raise CommandError(ErrorCode.NodeNotFound,
                                   f"{what} because not all proposed set members responded affirmatively: "
                                   f"{m['host']} failed with: the node is already initialized")

    def _members(self, members: list, set_name: str, version: int) -> list[dict]:
        out = [self._any_member(m) for m in members]
        ids = [m["_id"] for m in out]
        hosts = [m["host"] for m in out]
        for i, m in enumerate(out):
            if ids.count(m["_id"]) > 1:
                raise CommandError(ErrorCode.InvalidReplicaSetConfig,
                                   f"Found two member configurations with same _id field, members.{ids.index(m['_id'])}"
                                   f"._id == members.{i}._id == {m['_id']}")
            if hosts.count(m["host"]) > 1:
                raise CommandError(ErrorCode.InvalidReplicaSetConfig,
                                   f"Found two member configurations with same host field, members."
                                   f"{hosts.index(m['host'])}.host == members.{i}.host == {m['host']}")
        if not any(self._maps_to_me(h) for h in hosts):
            raise CommandError(ErrorCode.NodeNotFound,
                               f"No host described in new configuration with {{version: {version}, term: 0}} for "
                               f"replica set {set_name} maps to this node")
        if not any(m["priority"] > 0 and m["votes"] for m in out):
            raise CommandError(ErrorCode.InvalidReplicaSetConfig,
                               "Replica set configuration must contain at least one non-arbiter member with "
                               "priority > 0")
        if len(out) > MAX_MEMBERS:
            raise CommandError(ErrorCode.InvalidReplicaSetConfig,
                               f"Replica set configuration contains {len(out)} members, but must have at most "
                               f"{MAX_MEMBERS}")
        voters = sum(1 for m in out if m["votes"])
        if voters > MAX_VOTERS:
            raise CommandError(ErrorCode.InvalidReplicaSetConfig,
                               f"Replica set configuration contains {voters} voting members, but must be at least "
                               f"1 and no more than {MAX_VOTERS}")
        return out

    def _any_member(self, given: Any) -> dict:
        for key in given:
            if key not in _MEMBER_FIELDS and key not in ("slaveDelay", "newlyAdded"):
                raise CommandError(ErrorCode.IDLUnknownField, f"BSON field 'MemberConfig.{key}' is an unknown field.")
        for key in ("_id", "host"):
            if key not in given:
                raise CommandError(ErrorCode.IDLFailedToParse,
                                   f"BSON field 'MemberConfig.{key}' is missing but a required field")
        if not isinstance(given["host"], str):
            raise CommandError(ErrorCode.TypeMismatch,
                               "BSON field 'MemberConfig.host' is the wrong type, expected type 'string'")
        if given.get("arbiterOnly"):
            raise CommandError(ErrorCode.NotImplemented, "ginkgodb has no arbiters: every member bears data")
        delay = given.get("secondaryDelaySecs", given.get("slaveDelay", 0))
        if not isinstance(delay, (int, float)) or isinstance(delay, bool) or not 0 <= delay <= 3600 * 24 * 366:
            raise CommandError(ErrorCode.BadValue, f"secondaryDelaySecs field value of {delay} seconds is out of range")
        priority = given.get("priority", 1)
        votes = given.get("votes", 1)
        hidden = bool(given.get("hidden", False))
        if not isinstance(priority, (int, float)) or isinstance(priority, bool) or not 0 <= priority <= 1000:
            raise CommandError(ErrorCode.BadValue, f"priority field value of {priority} is out of range")
        if votes not in (0, 1):
            raise CommandError(ErrorCode.BadValue, f"votes field value is {votes} but must be 0 or 1")
        if hidden and priority != 0:
            raise CommandError(ErrorCode.InvalidReplicaSetConfig, "priority must be 0 when hidden=true")
        if priority and not votes:
            raise CommandError(ErrorCode.InvalidReplicaSetConfig, "priority must be 0 when non-voting (votes:0)")
        if priority and delay:
            raise CommandError(ErrorCode.InvalidReplicaSetConfig, "priority must be 0 when secondaryDelaySecs is set")
        tags = given.get("tags") or {}
        if not isinstance(tags, Mapping) or not all(isinstance(v, str) for v in tags.values()):
            raise CommandError(ErrorCode.TypeMismatch, "tags field value must be a document of strings")
        return {"_id": given["_id"], "host": given["host"], "arbiterOnly": False,
                "buildIndexes": bool(given.get("buildIndexes", True)), "hidden": hidden, "priority": priority,
                "tags": dict(tags), "secondaryDelaySecs": Int64(int(delay)), "votes": int(votes)}

    # ------------------------------------------------------------------ facts (for repl/)
    def my_member(self) -> dict:
        return self._mine(self.config or {}) or {}

    def my_id(self) -> int:
        return int(self.my_member().get("_id", -1))

    def config_version(self) -> int:
        return int((self.config or {}).get("version", 1))

    def voters(self) -> list[int]:
        return [m["_id"] for m in (self.config or {}).get("members", []) if m.get("votes", 1)]

    def last_applied(self) -> Timestamp:
        return self.engine.oplog.last_ts or ZERO

    def electable(self) -> bool:
        mine = self.my_member()
        return (self.state is MemberState.SECONDARY and time.monotonic() >= self.step_down_until
                and mine.get("priority", 1) > 0 and bool(mine.get("votes", 1)) and not self.sync.diverged)

    # ------------------------------------------------------------------ state changes (from repl/)
    def won(self, term: int) -> None:
        self.sync.follow(None)   # the last batch from the old primary is applied before writes start
        with self._lock:
            self.forced_source = None
            self.term = term
            self.engine.oplog.set_term(term)
            self.state = MemberState.PRIMARY
            self.primary_host = self.me
            self.election_ts = self.last_applied()
            self.election_date = datetime.datetime.now(datetime.UTC)
            self.election_reason = "electionTimeout"
            self.positions.reset()
            _write(self.engine, ELECTION_COLL, {"_id": "election", "term": Int64(term),
                                                "candidateIndex": Int64(self.my_id())})
        ts = self.engine.oplog.append_noop({"msg": "new primary"})
        self.positions.update(self.my_id(), ts)
        self.watch.changed()

    def lost_primacy(self, reason: str) -> None:
        with self._lock:
            if self.state is MemberState.PRIMARY:
                self.state = MemberState.SECONDARY
                self.primary_host = None
                self.watch.changed()

    def follow(self, primary: Optional[str], term: int) -> None:
        changed = False
        with self._lock:
            if self.state is MemberState.PRIMARY:
                if primary is not None and primary != self.me:
                    self.state = MemberState.SECONDARY
                    changed = True
                else:
                    return
            if primary != self.primary_host:
                self.primary_host = primary
                changed = True
            if term > self.term:
                self.term = term
        if primary is not None and primary != self.me:
            self.sync.follow(self._sync_source(primary))
        if changed:
            self.watch.changed()

    def _sync_source(self, primary: str) -> str:
        """The primary, or the member replSetSyncFrom chose while it is still a healthy member
        of the configuration that does not itself pull from this one (mongod drops a sync source
        it can no longer use the same way)."""
        forced = self.forced_source
        if forced is None or forced == primary:
            return primary
        members = {m["host"] for m in (self.config or {}).get("members", [])}
        peer = next((p for p in self.peers.reachable() if p.host == forced), None)
        if forced not in members or peer is None or peer.sync_source == self.me:
            self.forced_source = None
            return primary
        return forced

    def _downstream_positions(self) -> dict[int, Timestamp]:
        """The positions members that pull from this one reported here, forwarded to this
        member's own source with its position (mongod's replSetUpdatePosition carries every
        member's optime it knows), so the primary counts them for `w`."""
        mine = self.my_id()
        return {m: ts for m, ts in self.positions.snapshot().items() if m != mine}

    def sync_from(self, target: str) -> dict:
        """replSetSyncFrom: mongod's checks (TopologyCoordinator::prepareSyncFromResponse), then
        this member pulls from `target` (configured host) until it can no longer use it."""
        reply: dict[str, Any] = {"syncFromRequested": target}
        with self._lock:
            if self.is_primary:
                raise CommandError(ErrorCode.NotSecondary, "primaries don't sync")
            members = (self.config or {}).get("members", [])
            wanted = host_port(target)
            found = next((m for m in members if host_port(m["host"]) == wanted), None)
            if found is None:
                raise CommandError(ErrorCode.NodeNotFound, f'Could not find member "{target}" in replica set')
            if found["host"] == self.me:
                raise CommandError(ErrorCode.InvalidOptions, "I cannot sync from myself")
            mine = self.my_member()
            if not found.get("buildIndexes", True) and mine.get("buildIndexes", True):
                raise CommandError(ErrorCode.InvalidOptions,
                                   f'Cannot sync from "{target}" because it does not build indexes')
            if mine.get("votes", 1) and not found.get("votes", 1):
                raise CommandError(ErrorCode.InvalidOptions, f'Cannot sync from "{target}" because it is not a voter')
        peer = next((p for p in self.peers.reachable() if p.host == found["host"]), None)
        if peer is None:
            raise CommandError(ErrorCode.HostUnreachable, f"I cannot reach the requested member: {target}")
        if peer.optime.time + 10 < self.last_applied().time:
            reply["warning"] = f'requested member "{target}" is more than 10 seconds behind us'
        if self.sync.source:
            reply["prevSyncTarget"] = self.sync.source
        with self._lock:
            self.forced_source = found["host"]
            primary = self.primary_host
        self.sync.follow(self._sync_source(primary) if primary and primary != self.me else found["host"])
        return reply

    def _sync_state(self, state: str) -> None:
        """The oplog sync's news: an initial sync started or ended, or this member is too stale."""
        with self._lock:
            if self.state is MemberState.PRIMARY or self.state is MemberState.REMOVED:
                return
            self.sync_state = state
            held = self.maintenance_calls and state == "SECONDARY"   # replSetMaintenance holds it
            self.state = MemberState.RECOVERING if held else MemberState[state]
        self.watch.changed()

    def _applied(self, ts: Timestamp) -> None:
        self.positions.update(self.my_id(), ts)

    def update_position(self, member_id: int, ts: Timestamp) -> None:
        """replSetUpdatePosition from a secondary (on a secondary: one pulling from this
        member, whose position goes on to this member's source)."""
        self.positions.update(member_id, ts)
        if not self.is_primary and member_id != self.my_id():
            self.sync.forward()
        elif self.is_primary:
            before = self._committed_seen
            if self.change_stream_horizon() > before:
                self.engine.oplog.majority_moved()   # wakes change streams held at the old point

    def change_stream_horizon(self) -> Timestamp:
        """The newest majority-committed entry this member knows of: a change stream returns no
        later entry, so no consumer sees a write that a failover can still roll back (on a
        secondary the point comes from the primary's heartbeats, up to 0.5 s behind, and covers
        only what it applied from its source after checking their common point: a former
        primary's unreplicated writes stay hidden until the rollback undoes them)."""
        point = self._majority_ts()
        if not self.is_primary:      # only entries this member shares with its source
            point = min(point, self.sync.agreed)
        if point > self._committed_seen:
            self._committed_seen = point
        return self._committed_seen

    # ------------------------------------------------------------------ write concern
    def wait_for_replication(self, cmd: Mapping[str, Any], reply: dict) -> bool:
        name = next(iter(cmd), "")
        if name not in _WRITES or cmd.get("autocommit") is False and name not in ("commitTransaction",
                                                                                  "abortTransaction"):
            return True
        if reply.get("ok") != 1.0 or "writeConcernError" in reply:
            return True
        given = cmd.get("writeConcern")
        wc: dict = dict(given) if isinstance(given, Mapping) else {}
        w = wc.get("w", "majority")     # mongod 5.0+'s implicit default, also under a `w`-less writeConcern
        if w in (0, 1) or isinstance(w, bool):
            return True
        if not self.is_primary:
            if cmd.get("$db") == "local":   # not replicated: nothing to wait for
                return True
            # it stepped down after the write committed: the write may yet be rolled back, so
            # it is not acknowledged as replicated (mongod's awaitReplication says the same)
            reply["writeConcernError"] = _stepped_down(wc, w)
            return True
        data_bearing = len((self.config or {}).get("members", []))
        if isinstance(w, (int, float)) and w > data_bearing:
            reply["writeConcernError"] = {"code": int(ErrorCode.UnsatisfiableWriteConcern),
                                          "codeName": "UnsatisfiableWriteConcern",
                                          "errmsg": "Not enough data-bearing nodes",
                                          "errInfo": {"writeConcern": wc}}
            return True
        target = self.last_applied()
        self.positions.update(self.my_id(), target)
        wtimeout = wc.get("wtimeout", 0)
        timeout = None if not wtimeout else float(wtimeout) / 1000.0
        # a new term while it waits: it stepped down, whether or not it was elected again
        term = self.term
        outcome = self.positions.wait_for(target, w, timeout, lambda: self.is_primary and self.term == term)
        if outcome == "ok":
            return True
        if outcome == "timeout":
            reply["writeConcernError"] = {"code": int(ErrorCode.WriteConcernFailed), "codeName": "WriteConcernFailed",
                                          "errmsg": "waiting for replication timed out",
                                          "errInfo": {"wtimeout": True, "writeConcern": _shown(wc, w)}}
        else:
            reply["writeConcernError"] = _stepped_down(wc, w)
        return True

    def wait_for_majority_read(self, deadline: Optional[float]) -> None:
        """readConcern majority: LMDB keeps no older snapshot to read, so the read waits until
        everything this member has applied is majority-committed, then reads the latest data."""
        target = self.last_applied()
        while self._majority_ts() < target and self.primary_host is not None:
            if deadline is not None and time.monotonic() >= deadline:
                raise CommandError(ErrorCode.MaxTimeMSExpired, "operation exceeded time limit")
            time.sleep(0.01)

    # ------------------------------------------------------------------ commands
    def step_down(self, seconds: float, catch_up: float, force: bool) -> None:
        with self._lock:
            if not self.is_primary:
                raise CommandError(ErrorCode.NotWritablePrimary, "not primary so can't step down")
        deadline = time.monotonic() + catch_up
        mine = self.last_applied()
        electable = {m["_id"] for m in (self.config or {}).get("members", []) if m.get("priority", 1) > 0}
        while not any(p.optime >= mine and p.member_id in electable for p in self.peers.reachable()):
            if time.monotonic() >= deadline:
                if force:
                    break
                when = datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")
                raise CommandError(ErrorCode.ExceededTimeLimit,
                                   f"No electable secondaries caught up as of {when}. Please use the "
                                   "replSetStepDown command with the argument {force: true} to force node to "
                                   "step down.")
            time.sleep(0.05)
        self.step_down_until = time.monotonic() + seconds
        self.coordinator.resign()

    def freeze(self, seconds: int) -> dict:
        with self._lock:
            if self.is_primary:
                raise CommandError(ErrorCode.NotSecondary,
                                   "cannot freeze node when primary or running for election. state: Primary")
            if seconds == 0:
                self.step_down_until = 0.0
                return {"info": "unfreezing"}
            self.step_down_until = time.monotonic() + seconds
            return {"warning": "you really want to freeze for only 1 second?"} if seconds == 1 else {}

    def close(self) -> None:
        self.noops.close()
        self.sync.close()
        self.coordinator.close()

    # ------------------------------------------------------------------ documents
    def _majority_ts(self) -> Timestamp:
        if self.is_primary:
            self.positions.update(self.my_id(), self.last_applied())
            return self.positions.majority_point()
        # a secondary knows the primary's commit point from its hello, bounded by its own position
        primary = next((p for p in self.peers.statuses() if p.host == self.primary_host), None)
        point = primary.majority if primary is not None else ZERO
        return min(point, self.last_applied())

    def hello_fields(self, legacy: bool) -> dict:
        primary_key = "ismaster" if legacy else "isWritablePrimary"
        with self._lock:
            out = self._hello_start(primary_key)
            if not self.initialized:
                return out
            assert self.config is not None
            members = self.config.get("members", [])
            out["hosts"] = [m["host"] for m in members if not m.get("hidden") and m.get("priority", 1) > 0]
            passives = [m["host"] for m in members if not m.get("hidden") and m.get("priority", 1) == 0]
            if passives:
                out["passives"] = passives
            out.update({"setName": self.set_name, "setVersion": self.config.get("version", 1),
                        primary_key: self.is_primary, "secondary": self.state is MemberState.SECONDARY})
            if self.primary_host:
                out["primary"] = self.primary_host
            mine = self.my_member()
            if mine.get("priority", 1) == 0:
                out["passive"] = True
            if mine.get("hidden"):
                out["hidden"] = True
            if mine.get("secondaryDelaySecs"):
                out["secondaryDelaySecs"] = Int64(mine["secondaryDelaySecs"])
            tags = mine.get("tags") or {}
            if tags:
                out["tags"] = dict(tags)
            out["me"] = self.me
            if self.is_primary:
                out["electionId"] = election_id(self.term)
            ts = self.last_applied()
            term = self.term
        majority = self._majority_ts()
        out["lastWrite"] = {"opTime": {"ts": ts, "t": Int64(term)}, "lastWriteDate": _date(ts),
                            "majorityOpTime": {"ts": majority, "t": Int64(term)}, "majorityWriteDate": _date(majority)}
        return out

    def status(self) -> dict:
        majority = self._majority_ts()
        with self._lock:
            ts = self.last_applied()
            now = datetime.datetime.now(datetime.UTC)
            op = {"ts": ts, "t": Int64(self.term)}
            committed = {"ts": majority, "t": Int64(self.term)}
            members = (self.config or {}).get("members", [])
            peers = {p.host: p for p in self.peers.statuses()}
            out_members = []
            for m in members:
                if m["host"] == self.me:
                    out_members.append(self._self_status(m, op, ts))
                else:
                    out_members.append(self._peer_status(m, peers.get(m["host"])))
            voters = len(self.voters())
            syncing = self.state in (MemberState.SECONDARY, MemberState.STARTUP2)
            source = self.sync.source if syncing else ""
            source_id = next((m["_id"] for m in members if m["host"] == source), -1)
            out: dict[str, Any] = {
                "set": self.set_name, "date": now, "myState": int(self.state), "term": Int64(self.term),
                "syncSourceHost": source, "syncSourceId": source_id, "heartbeatIntervalMillis": Int64(500),
                "majorityVoteCount": majority_of(voters), "writeMajorityCount": majority_of(voters),
                "votingMembersCount": voters, "writableVotingMembersCount": voters,
                "optimes": {"lastCommittedOpTime": committed, "lastCommittedWallTime": _date(majority),
                            "readConcernMajorityOpTime": committed, "appliedOpTime": op, "durableOpTime": op,
                            "lastAppliedWallTime": _date(ts), "lastDurableWallTime": _date(ts)},
                "lastStableRecoveryTimestamp": majority,
            }
            if self.is_primary and self.election_ts is not None:
                out["electionCandidateMetrics"] = {
                    "lastElectionReason": self.election_reason, "lastElectionDate": self.election_date,
                    "electionTerm": Int64(self.term), "lastSeenOpTimeAtElection": {"ts": self.election_ts,
                                                                                   "t": Int64(self.term)},
                    "numVotesNeeded": majority_of(voters),
                    "priorityAtElection": float(self.my_member().get("priority", 1)),
                    "newTermStartDate": self.election_date}
            progress = self.sync.initial_sync
            if progress is not None:
                out["initialSyncStatus"] = progress.document()
            out["members"] = out_members
            return out

    def _self_status(self, m: dict, op: dict, ts: Timestamp) -> dict:
        out: dict[str, Any] = {
            "_id": m["_id"], "name": m["host"], "health": 1.0, "state": int(self.state),
            "stateStr": self.state.label, "uptime": int(time.time() - self.started), "optime": op,
            "optimeDate": _date(ts), "lastAppliedWallTime": _date(ts), "lastDurableWallTime": _date(ts),
            "syncSourceHost": (self.sync.source if self.state in (MemberState.SECONDARY, MemberState.STARTUP2)
                               else ""),
            "syncSourceId": -1, "infoMessage": self.sync.message or self.coordinator.message,
        }
        if self.is_primary and self.election_ts is not None:
            out["electionTime"] = self.election_ts
            out["electionDate"] = self.election_date
        out.update({"configVersion": self.config_version(), "configTerm": self.term, "self": True,
                    "lastHeartbeatMessage": ""})
        return out

    def _peer_status(self, m: dict, peer: Optional[PeerStatus]) -> dict:
        if peer is None:
            peer = PeerStatus(m["host"], m["_id"])
        optime = {"ts": peer.optime, "t": Int64(peer.term)}
        never = datetime.datetime.fromtimestamp(0, datetime.UTC)
        return {
            "_id": m["_id"], "name": m["host"], "health": 1.0 if peer.healthy else 0.0, "state": peer.state,
            "stateStr": _STATE_NAMES.get(peer.state, "UNKNOWN"), "uptime": 0, "optime": optime,
            "optimeDurable": optime, "optimeDate": _date(peer.optime), "optimeDurableDate": _date(peer.optime),
            "lastAppliedWallTime": _date(peer.optime), "lastDurableWallTime": _date(peer.optime),
            "lastHeartbeat": peer.last_heartbeat or never, "lastHeartbeatRecv": peer.last_heartbeat or never,
            "pingMs": Int64(peer.ping_ms), "lastHeartbeatMessage": "" if peer.healthy else peer.message,
            "syncSourceHost": peer.sync_source, "syncSourceId": -1, "infoMessage": "",
            "configVersion": self.config_version(), "configTerm": self.term,
        }

