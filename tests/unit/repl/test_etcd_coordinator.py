"""Elections on a real etcd (repl/etcd.py, repl/coordinator.py): one winner, the term from
etcd's revision, the freshness rule, step-down when the lease cannot be renewed."""
from __future__ import annotations

import time
from typing import Optional

import pytest
from bson.timestamp import Timestamp
from support.etcd import EtcdProcess

from ginkgodb.repl import LEASE_TTL, Coordinator, EtcdClient, Peers, PeerStatus

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def etcd(tmp_path):
    proc = EtcdProcess(tmp_path / "etcd")
    yield proc
    proc.stop()


class FakePeers(Peers):
    def __init__(self, statuses: list[PeerStatus]) -> None:
        super().__init__()
        self.fixed = statuses

    def reachable(self) -> list[PeerStatus]:
        return list(self.fixed)


class FakeMember:
    set_name = "rs0"

    def __init__(self, member_id: int, applied: int) -> None:
        self.me = f"127.0.0.1:{1000 + member_id}"
        self.id = member_id
        self.applied = Timestamp(100, applied)
        self.config: Optional[dict] = {"_id": "rs0"}
        self.primary_term: Optional[int] = None
        self.following: Optional[str] = None
        self.lost: list[str] = []

    def adopt_config(self, config: dict) -> bool:
        self.config = config
        return True

    def my_id(self) -> int:
        return self.id

    def electable(self) -> bool:
        return self.primary_term is None

    def voters(self) -> list[int]:
        return [0, 1, 2]

    def last_applied(self) -> Timestamp:
        return self.applied

    def won(self, term: int) -> None:
        self.primary_term = term

    def lost_primacy(self, reason: str) -> None:
        self.primary_term = None
        self.lost.append(reason)

    def follow(self, primary: Optional[str], term: int) -> None:
        self.following = primary


def wait(cond, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.05)
    return False


def test_the_client_creates_once_and_leases(etcd):
    client = EtcdClient(etcd.url)
    lease = client.grant(5)
    revision = client.create("/k", {"a": 1}, lease)
    assert revision is not None and client.create("/k", {"a": 2}) is None
    value, created, held_by = client.get("/k")
    assert value == {"a": 1} and created == revision and held_by == lease
    assert client.keep_alive(lease) > 0
    assert client.delete_if_lease("/k", lease + 1) is False and client.delete_if_lease("/k", lease) is True
    assert client.get("/k") is None
    client.close()


def test_one_winner_the_term_is_the_revision_and_the_other_follows(etcd):
    a, b = FakeMember(0, 5), FakeMember(1, 5)
    peer_of_a, peer_of_b = PeerStatus(b.me, 1, True, 2, b.applied), PeerStatus(a.me, 0, True, 2, a.applied)
    ca, cb = Coordinator(etcd.url, a, FakePeers([peer_of_a])), Coordinator(etcd.url, b, FakePeers([peer_of_b]))
    ca.start()
    cb.start()
    try:
        assert wait(lambda: (a.primary_term is None) != (b.primary_term is None))
        winner, loser = (a, b) if a.primary_term is not None else (b, a)
        _, revision, _ = EtcdClient(etcd.url).get("/ginkgodb/replsets/rs0/primary")
        assert winner.primary_term == revision
        assert wait(lambda: loser.following == winner.me)
        time.sleep(LEASE_TTL + 0.5)          # the lease is renewed: still one primary
        assert winner.primary_term == revision and loser.primary_term is None
        (ca if winner is a else cb).resign()
        assert winner.lost == ["stepped down"]
        assert wait(lambda: loser.primary_term is not None or winner.primary_term is not None)
        new_term = loser.primary_term or winner.primary_term
        assert new_term > revision            # terms only grow
    finally:
        ca.close()
        cb.close()


def test_a_staler_candidate_does_not_run(etcd):
    stale = FakeMember(0, 1)
    fresher = PeerStatus("127.0.0.1:1001", 1, True, 2, Timestamp(100, 9))
    c = Coordinator(etcd.url, stale, FakePeers([fresher]))
    c.start()
    try:
        time.sleep(1.5)
        assert stale.primary_term is None
        fresher.optime = Timestamp(100, 1)     # caught up: now it may run
        assert wait(lambda: stale.primary_term is not None)
    finally:
        c.close()


def test_no_majority_reachable_means_no_election(etcd):
    alone = FakeMember(0, 9)
    c = Coordinator(etcd.url, alone, FakePeers([]))
    c.start()
    try:
        time.sleep(1.5)
        assert alone.primary_term is None      # 1 of 3 voters reachable
    finally:
        c.close()


def test_the_primary_steps_down_when_etcd_is_unreachable(etcd):
    a = FakeMember(0, 5)
    c = Coordinator(etcd.url, a, FakePeers([PeerStatus("127.0.0.1:1001", 1, True, 2, Timestamp(100, 1))]))
    c.start()
    try:
        assert wait(lambda: a.primary_term is not None)
        etcd.pause()
        started = time.monotonic()
        assert wait(lambda: a.primary_term is None, LEASE_TTL + 2)
        assert time.monotonic() - started < LEASE_TTL        # before the lease can have expired
        assert a.lost and "lease" in a.lost[0]
        etcd.resume()
        assert wait(lambda: a.primary_term is not None, 15)   # service resumes with etcd
    finally:
        etcd.resume()
        c.close()
