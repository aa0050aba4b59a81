"""A member's consensus work over etcd: the configuration, elections, the primary's lease.

Keys (under `/ginkgodb/replsets/<set>/`): `config` (the configuration replSetInitiate wrote,
JSON) and `primary` ({host, memberId}, attached to the primary's lease). etcd's Raft makes the
`primary` key the one place that says who may write:

- a member whose config is not known yet polls `config` and adopts it when it names this node;
- no `primary` key -> an electable member runs when it is at least as fresh as every reachable
  voter (MongoDB's freshness rule, from the heartbeats) and a majority of voters is reachable; it
  grants a lease and creates the key only if it does not exist (an etcd transaction). The key's
  create revision is the new term: etcd revisions only grow, so terms do;
- the primary renews its lease every `RENEW_EVERY` seconds and steps down as soon as a renewal
  fails past `LEASE_TTL - SAFETY` seconds after the last good one, or the key is no longer its
  own: by then the lease may have expired in etcd and another member may be elected;
- a member that sees another's key follows that primary (its sync source).

Every member reads the keys each `TICK`; an etcd watch on `primary` wakes it at once when the key
changes, so a secondary learns a new primary (and a step-down's free key) within a round trip.

The member itself (commands/replicated_member.py) provides the callbacks; this module knows
nothing of commands.
"""
from __future__ import annotations

import logging
import random
import threading
import time
from typing import Optional, Protocol

from bson.timestamp import Timestamp

from .etcd import EtcdClient, EtcdError
from .peers import Peers

LOG = logging.getLogger("ginkgodb.repl")
LEASE_TTL = 3          # seconds: the longest a dead primary keeps the set without one
RENEW_EVERY = 0.5
SAFETY = 0.75          # the primary gives up this long before its lease can have expired
TICK = 0.2
CONFIG_EVERY = 5      # ticks between reads of the configuration


def key_prefix(set_name: str) -> str:
    return f"/ginkgodb/replsets/{set_name}/"


class MemberHooks(Protocol):
    set_name: str
    config: Optional[dict]

    def adopt_config(self, config: dict) -> bool: ...
    def my_id(self) -> int: ...
    def electable(self) -> bool: ...
    def voters(self) -> list[int]: ...
    def last_applied(self) -> Timestamp: ...
    def won(self, term: int) -> None: ...
    def lost_primacy(self, reason: str) -> None: ...
    def follow(self, primary: Optional[str], term: int) -> None: ...


class Coordinator:
    def __init__(self, etcd_url: str, member: MemberHooks, peers: Peers) -> None:
        self.etcd = EtcdClient(etcd_url)
        self.member = member
        self.peers = peers
        self.prefix = key_prefix(member.set_name)
        self.lease: Optional[int] = None
        self.renewed_at = 0.0
        self.message = ""
        self._stop = threading.Event()
        #: set by the watch on the primary key: the loop runs its next tick now
        self._wake = threading.Event()
        self._ticks = 0
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, daemon=True, name="ginkgodb-coordinator")
        self._watcher = threading.Thread(target=self._watch, daemon=True, name="ginkgodb-etcd-watch")

    def start(self) -> None:
        self._thread.start()
        self._watcher.start()

    def _watch(self) -> None:
        while not self._stop.is_set():
            try:
                self.etcd.watch(self.prefix + "primary", self._wake.set, self._stop)
            except EtcdError:
                self._stop.wait(0.5)     # the loop's own reads go on meanwhile

    # ------------------------------------------------------------------ the configuration
    def publish_config(self, config: object) -> bool:
        """replSetInitiate: store the set's configuration once; False when one exists."""
        return self.etcd.create(self.prefix + "config", config) is not None

    def replace_config(self, config: object) -> None:
        """replSetReconfig on the primary: the new configuration for every member."""
        self.etcd.put(self.prefix + "config", config)

    # ------------------------------------------------------------------ the loop
    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._tick()
                self.message = ""
            except EtcdError as exc:
                self.message = str(exc)[:300]
                self._check_lease_deadline()
            except Exception:      # a bug must not end the member's consensus loop silently
                LOG.exception("replica set coordinator")
            self._wake.wait(TICK)
            self._wake.clear()

    def _tick(self) -> None:
        member = self.member
        if member.config is None:
            got = self.etcd.get(self.prefix + "config")
            if got is not None:
                member.adopt_config(got[0])
            return
        self._ticks += 1
        if self._ticks % CONFIG_EVERY == 0:      # a reconfig on the primary reaches every member
            got = self.etcd.get(self.prefix + "config")
            if got is not None:
                member.adopt_config(got[0])
        with self._lock:
            if self.lease is not None:
                self._renew()
                return
        got = self.etcd.get(self.prefix + "primary")
        if got is not None:
            value, revision, _ = got
            member.follow(str(value.get("host")), revision)
            return
        member.follow(None, -1)
        self._maybe_run()

    def _renew(self) -> None:
        """The primary's lease (under the lock)."""
        assert self.lease is not None
        since = time.monotonic() - self.renewed_at
        if since >= RENEW_EVERY:
            # a call that hangs (etcd stopped) must not carry the primary past its deadline
            left = LEASE_TTL - SAFETY - since
            if left <= 0:
                self._resign_locked("could not renew its lease in etcd")
                return
            ttl = self.etcd.keep_alive(self.lease, timeout=min(1.0, max(0.05, left)))
            if ttl <= 0:
                self._resign_locked("lease expired")
                return
            self.renewed_at = time.monotonic()
        got = self.etcd.get(self.prefix + "primary")
        if got is None or got[2] != self.lease:
            self._resign_locked("no longer holds the primary key")
            return
        self._check_lease_deadline_locked()

    def _check_lease_deadline(self) -> None:
        with self._lock:
            self._check_lease_deadline_locked()

    def _check_lease_deadline_locked(self) -> None:
        if self.lease is not None and time.monotonic() - self.renewed_at > LEASE_TTL - SAFETY:
            self._resign_locked("could not renew its lease in etcd")

    def _resign_locked(self, reason: str) -> None:
        lease, self.lease = self.lease, None
        LOG.warning("stepping down: %s", reason)
        self.member.lost_primacy(reason)
        if lease is not None:
            try:
                self.etcd.revoke(lease)
            except EtcdError:
                pass

    # ------------------------------------------------------------------ elections
    def fresh_enough(self) -> bool:
        """MongoDB's freshness rule, and a reachable majority of voters (this member counted)."""
        member = self.member
        voters = set(member.voters())
        mine = member.last_applied()
        reachable = [p for p in self.peers.reachable() if p.member_id in voters]
        if any(p.optime > mine for p in reachable):
            return False
        counted = len(reachable) + (1 if member.my_id() in voters else 0)
        return counted >= len(voters) // 2 + 1

    def _maybe_run(self) -> None:
        member = self.member
        if not member.electable() or not self.fresh_enough():
            return
        self._stop.wait(random.uniform(0, 0.1))   # two equally fresh candidates: etcd picks one anyway
        lease = self.etcd.grant(LEASE_TTL)
        granted = time.monotonic()
        revision = self.etcd.create(self.prefix + "primary", {"host": getattr(member, "me", ""),
                                                              "memberId": member.my_id()}, lease)
        if revision is None:
            self.etcd.revoke(lease)
            return
        with self._lock:
            self.lease, self.renewed_at = lease, granted
        LOG.info("won the election for term %s", revision)
        member.won(revision)

    def resign(self) -> None:
        """replSetStepDown: give the primary key up now."""
        with self._lock:
            lease = self.lease
            if lease is None:
                return
            try:
                self.etcd.delete_if_lease(self.prefix + "primary", lease)
            except EtcdError:
                pass
            self._resign_locked("stepped down")

    @property
    def holds_lease(self) -> bool:
        return self.lease is not None

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=2)
        with self._lock:
            if self.lease is not None:
                try:
                    self.etcd.revoke(self.lease)   # a clean shutdown lets the others elect at once
                except EtcdError:
                    pass
                self.lease = None
        self.peers.close()
        self.etcd.close()
