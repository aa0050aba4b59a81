"""Heartbeats: what this member knows of the others, from their `hello` (state, last applied
optime), one thread per peer. Elections read it for the freshness rule, replSetGetStatus for
its members list."""
from __future__ import annotations

import datetime
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Optional

import pymongo
from bson.timestamp import Timestamp

from .app_names import HEARTBEAT

HEARTBEAT_INTERVAL = 0.5
#: a peer not heard from for this long is unreachable
HEARTBEAT_TIMEOUT = 2.0


@dataclass
class PeerStatus:
    host: str
    member_id: int
    healthy: bool = False
    state: int = 8                      # mongod's DOWN until heard
    optime: Timestamp = field(default_factory=lambda: Timestamp(0, 0))
    term: int = -1
    last_heard: float = 0.0             # monotonic
    last_heartbeat: Optional[datetime.datetime] = None
    ping_ms: int = 0
    sync_source: str = ""
    majority: Timestamp = field(default_factory=lambda: Timestamp(0, 0))   # its lastWrite.majorityOpTime
    message: str = ""


def _client(host: str) -> Any:
    return pymongo.MongoClient(host, directConnection=True, serverSelectionTimeoutMS=1000, connectTimeoutMS=1000,
                               socketTimeoutMS=2000, appname=HEARTBEAT)


class Peers:
    """Heartbeats to every other member of the configuration."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._status: dict[str, PeerStatus] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._stop = threading.Event()

    def configure(self, members: list[tuple[int, str]]) -> None:
        """Watch these (id, host) peers (this member excluded); forget the others."""
        with self._lock:
            wanted = {host for _, host in members}
            for host in [h for h in self._status if h not in wanted]:
                del self._status[host]      # its thread ends at its next beat
            for member_id, host in members:
                if host in self._status:
                    continue
                self._status[host] = PeerStatus(host, member_id)
                thread = threading.Thread(target=self._beat, args=(host,), daemon=True,
                                          name=f"ginkgodb-heartbeat-{host}")
                self._threads[host] = thread
                thread.start()

    def _beat(self, host: str) -> None:
        client = _client(host)
        try:
            while not self._stop.is_set() and host in self._status:
                started = time.monotonic()
                try:
                    hello = client.admin.command("hello")
                    status = client.admin.command("replSetGetStatus") if hello.get("setName") else {}
                    self._heard(host, hello, status, time.monotonic() - started)
                except Exception as exc:        # unreachable, or not a member yet: not healthy
                    self._lost(host, str(exc))
                self._stop.wait(HEARTBEAT_INTERVAL)
        finally:
            client.close()

    def _heard(self, host: str, hello: dict, status: dict, elapsed: float) -> None:
        with self._lock:
            peer = self._status.get(host)
            if peer is None:
                return
            peer.healthy = True
            peer.last_heard = time.monotonic()
            peer.last_heartbeat = datetime.datetime.now(datetime.UTC)
            peer.ping_ms = int(elapsed * 1000)
            peer.state = (1 if hello.get("isWritablePrimary") else 2 if hello.get("secondary")
                          else int(status.get("myState", 0)))
            majority = (hello.get("lastWrite") or {}).get("majorityOpTime") or {}
            if isinstance(majority.get("ts"), Timestamp):
                peer.majority = majority["ts"]
            optime = (hello.get("lastWrite") or {}).get("opTime") or {}
            if isinstance(optime.get("ts"), Timestamp):
                peer.optime = optime["ts"]
                peer.term = int(optime.get("t", -1))
            peer.sync_source = str(status.get("syncSourceHost", ""))
            peer.message = ""

    def _lost(self, host: str, why: str) -> None:
        with self._lock:
            peer = self._status.get(host)
            if peer is None:
                return
            if time.monotonic() - peer.last_heard > HEARTBEAT_TIMEOUT:
                peer.healthy = False
                peer.state = 8
            peer.message = why[:200]

    def statuses(self) -> list[PeerStatus]:
        with self._lock:
            return [PeerStatus(**vars(p)) for p in self._status.values()]

    def reachable(self) -> list[PeerStatus]:
        now = time.monotonic()
        return [p for p in self.statuses() if p.healthy and now - p.last_heard <= HEARTBEAT_TIMEOUT]

    def close(self) -> None:
        self._stop.set()
