"""replSetSyncFrom on a member (commands/replicated_member.py): mongod's checks and reply, the
sync source it then uses (the named member while it is healthy and does not pull from this one),
and the positions a chained member forwards. Heartbeats are set by hand: no member runs."""
from __future__ import annotations

import time

import pytest
from bson.timestamp import Timestamp
from support.members import offline_member
from support.runner import decode_all

from ginkgodb.commands import CommandContext, dispatch

ME, PRIMARY, OTHER, NON_VOTER, NO_INDEXES, GONE = (f"127.0.0.1:{27017 + i}" for i in range(6))
CONFIG = {"_id": "rs0", "version": 1, "members": [
    {"_id": 0, "host": ME}, {"_id": 1, "host": PRIMARY}, {"_id": 2, "host": OTHER},
    {"_id": 3, "host": NON_VOTER, "priority": 0, "votes": 0},
    {"_id": 4, "host": NO_INDEXES, "priority": 0, "buildIndexes": False},
    {"_id": 5, "host": GONE}]}


@pytest.fixture
def member():
    with offline_member(CONFIG, ME) as m:
        m.primary_host = PRIMARY
        yield m


def heard(member, host: str, *, behind: float = 0.0, source: str = "") -> None:
    """A heartbeat from `host` just now (its optime `behind` seconds older than this member's)."""
    ts = member.last_applied()
    with member.peers._lock:
        peer = member.peers._status[host]
        peer.healthy, peer.last_heard, peer.sync_source = True, time.monotonic(), source
        peer.optime = Timestamp(int(ts.time - behind), 1)


def sync_from(member, target) -> dict:
    class Server:
        replica_set = member
        topology = member.watch
    reply = decode_all(dispatch(CommandContext(engine=member.engine, server=Server()),
                                {"replSetSyncFrom": target, "$db": "admin"}))
    return {k: v for k, v in reply.items() if k not in ("$clusterTime", "operationTime")}


def test_the_named_member_becomes_the_sync_source(member):
    for host in (OTHER, NON_VOTER, NO_INDEXES, PRIMARY):
        heard(member, host)
    reply = sync_from(member, OTHER)
    assert reply == {"syncFromRequested": OTHER, "ok": 1.0}     # no source yet: no prevSyncTarget
    assert member.forced_source == OTHER and member.sync.source == OTHER
    assert member._sync_source(PRIMARY) == OTHER
    heard(member, PRIMARY)
    assert sync_from(member, PRIMARY) == {"syncFromRequested": PRIMARY, "prevSyncTarget": OTHER, "ok": 1.0}
    assert member._sync_source(PRIMARY) == PRIMARY


def test_a_source_that_pulls_from_this_member_or_stops_answering_is_dropped(member):
    heard(member, OTHER)
    sync_from(member, OTHER)
    heard(member, OTHER, source=ME)            # a cycle: neither would get anything new
    assert member._sync_source(PRIMARY) == PRIMARY and member.forced_source is None
    heard(member, OTHER)
    sync_from(member, OTHER)
    with member.peers._lock:
        member.peers._status[OTHER].last_heard -= 10     # no heartbeat for 10 s
    assert member._sync_source(PRIMARY) == PRIMARY and member.forced_source is None


def test_a_member_far_behind_is_accepted_with_mongods_warning(member):
    heard(member, OTHER, behind=30)
    reply = sync_from(member, OTHER)
    assert reply["ok"] == 1.0 and reply["warning"] == f'requested member "{OTHER}" is more than 10 seconds behind us'


@pytest.mark.parametrize(("target", "code", "message"), [
    (ME, 72, "I cannot sync from myself"),
    ("127.0.0.1", 72, "I cannot sync from myself"),                    # the port defaults to 27017
    ("127.0.0.1:9999", 74, 'Could not find member "127.0.0.1:9999" in replica set'),
    (NON_VOTER, 72, f'Cannot sync from "{NON_VOTER}" because it is not a voter'),
    (NO_INDEXES, 72, f'Cannot sync from "{NO_INDEXES}" because it does not build indexes'),
    (GONE, 6, f"I cannot reach the requested member: {GONE}"),
    (1, 14, '"replSetSyncFrom" had the wrong type. Expected string, found int'),
    ("", 9, 'Empty host component parsing HostAndPort from ""'),
    ("h:99999", 2, 'Port number 99999 out of range parsing HostAndPort from "h:99999"'),
])
def test_mongods_errors(member, target, code, message):
    for host in (OTHER, NON_VOTER, NO_INDEXES):
        heard(member, host)
    reply = sync_from(member, target)
    assert (reply["ok"], reply["code"], reply["errmsg"]) == (0.0, code, message)
    assert member.forced_source is None


def test_the_primary_does_not_sync(member):
    member.won(7)
    reply = sync_from(member, OTHER)
    assert (reply["code"], reply["codeName"], reply["errmsg"]) == (95, "NotSecondary", "primaries don't sync")


def test_a_chained_member_forwards_the_positions_reported_to_it(member):
    member.update_position(2, Timestamp(100, 1))     # OTHER pulls from this member
    assert member._downstream_positions() == {2: Timestamp(100, 1)}
    sent = []

    class Admin:
        def command(self, cmd):
            sent.append(cmd)

    class Client:
        admin = Admin()
    member.sync._report(Client())
    (cmd,) = sent
    assert [(o["memberId"], o["appliedOpTime"]["ts"]) for o in cmd["optimes"]] == [
        (0, member.last_applied()), (2, Timestamp(100, 1))]
