"""Change streams on a member of several read majority-committed entries only, as mongod's: the
engine's streams stop at `oplog.majority_committed` (a hand-set point here), and the member gives
that point (commands/replicated_member.py: the positions on a primary, the primary's hello on a
secondary; it never goes back). No member runs: positions and heartbeats are set by hand."""
from __future__ import annotations

import threading
import time

import pytest
from bson.timestamp import Timestamp

from ginkgodb.client import MongoClient
from ginkgodb.client.runner import EngineChannel
from ginkgodb.commands import ReplicatedMember, TopologyWatch
from ginkgodb.commands.replica_set import MemberState
from ginkgodb.engine import Engine
from ginkgodb.storage import open_engine

ME, PRIMARY, OTHER = (f"127.0.0.1:{27017 + i}" for i in range(3))
CONFIG = {"_id": "rs0", "version": 1,
          "members": [{"_id": 0, "host": ME}, {"_id": 1, "host": PRIMARY}, {"_id": 2, "host": OTHER}]}


@pytest.fixture
def engine():
    eng = Engine(open_engine(None))
    yield eng
    eng.close()


@pytest.fixture
def client(engine):
    c = MongoClient(_channel=EngineChannel(engine))
    yield c
    c.close()


def last_ts(engine) -> Timestamp:
    return engine.oplog.last_ts


def test_a_stream_returns_no_entry_past_the_majority_commit_point(engine, client):
    coll = client.db.c
    coll.insert_one({"_id": 0})
    point = [last_ts(engine)]
    engine.oplog.majority_committed = lambda: point[0]
    with coll.watch(max_await_time_ms=50) as stream:
        assert stream.try_next() is None
        start_token = stream.resume_token
        coll.insert_one({"_id": 1})
        first = last_ts(engine)
        coll.insert_one({"_id": 2})
        assert stream.try_next() is None and stream.try_next() is None
        assert stream.resume_token == start_token       # the postBatchResumeToken waits too
        point[0] = first
        assert stream.try_next()["documentKey"] == {"_id": 1}
        assert stream.try_next() is None
        point[0] = last_ts(engine)
        assert stream.try_next()["documentKey"] == {"_id": 2}


def test_a_held_await_wakes_when_the_point_moves(engine, client):
    coll = client.db.c
    point = [last_ts(engine) or Timestamp(0, 0)]
    engine.oplog.majority_committed = lambda: point[0]
    with coll.watch(max_await_time_ms=5000) as stream:
        stream.try_next()
        coll.insert_one({"_id": 1})

        def commit() -> None:
            time.sleep(0.2)
            point[0] = last_ts(engine)
            engine.oplog.majority_moved()
        threading.Thread(target=commit).start()
        started = time.monotonic()
        event = stream.try_next()
        waited = time.monotonic() - started
    assert event is not None and event["documentKey"] == {"_id": 1}
    assert 0.15 <= waited < 2.0, waited       # woken by the move, not at the end of the await


def test_without_a_point_every_entry_is_returned(engine, client):
    assert engine.oplog.majority_committed is None      # a standalone or a set of one
    with client.db.c.watch(max_await_time_ms=50) as stream:
        client.db.c.insert_one({"_id": 1})
        assert stream.try_next()["documentKey"] == {"_id": 1}


@pytest.fixture
def member(engine):
    m = ReplicatedMember(engine, "rs0", ME, TopologyWatch(), etcd_url="http://127.0.0.1:9")
    engine.oplog.append_noop({"msg": "new primary"})
    m.adopt_config(dict(CONFIG))
    yield m
    m.sync.close()
    m.peers.close()


def test_a_secondary_reads_up_to_the_primarys_point_and_never_back(member, engine):
    assert engine.oplog.majority_committed == member.change_stream_horizon
    mine = member.last_applied()
    member.primary_host = PRIMARY
    with member.peers._lock:
        member.peers._status[PRIMARY].majority = Timestamp(mine.time + 100, 1)   # ahead of this member
    assert member.change_stream_horizon() == Timestamp(0, 0)   # nothing checked against its source yet
    member.sync.agreed = mine                               # the common point checked, or applied
    assert member.change_stream_horizon() == mine          # bounded by what this member applied
    member.primary_host = None                              # no primary known: the point stays
    assert member.change_stream_horizon() == mine


def test_a_former_primarys_unreplicated_writes_stay_hidden(member, engine, client):
    """Its own entries past the common point are not the set's, whatever the new primary's point."""
    common = member.last_applied()
    member.sync.agreed = common
    client.db.c.insert_one({"_id": "never majority-committed"})   # as it wrote them while primary
    member.primary_host = PRIMARY
    with member.peers._lock:
        member.peers._status[PRIMARY].majority = Timestamp(common.time + 100, 1)
    assert member.last_applied() > common
    assert member.change_stream_horizon() == common


def test_a_primary_moves_its_point_with_the_secondaries_positions(member, engine, client):
    member.state = MemberState.PRIMARY
    member.primary_host = ME
    client.db.c.insert_one({"_id": 1})
    written = last_ts(engine)
    assert member.change_stream_horizon() < written         # only this member has it
    member.update_position(2, written)                       # a second of three: a majority
    assert member.change_stream_horizon() == written


def test_an_idle_primary_writes_a_periodic_noop_that_moves_an_idle_streams_token(member, engine, client):
    """mongod's NoopWriter: after an interval in which the newest entry did not move, a
    `periodic noop` entry; never on a secondary, never after a write, not when turned off."""
    from ginkgodb.commands.server_parameters import PARAMETERS
    from ginkgodb.repl import NoopWriter
    assert PARAMETERS.value("periodicNoopIntervalSecs") == 10 and PARAMETERS.value("writePeriodicNoops") is True
    noops = member.noops
    assert isinstance(noops, NoopWriter)
    assert not noops.check() and not noops.check()              # a secondary never writes one
    member.state = MemberState.PRIMARY
    member.primary_host = ME
    member.update_position(2, member.last_applied())
    with client.db.c.watch(max_await_time_ms=50) as stream:
        stream.try_next()
        assert not noops.check()                                # the first look only notes the newest entry
        client.db.c.insert_one({"_id": 1})
        member.update_position(2, engine.oplog.last_ts)
        assert not noops.check()                                # it moved: no no-op
        assert stream.try_next()["documentKey"] == {"_id": 1}
        assert stream.try_next() is None
        after_event = stream.resume_token
        assert noops.check()                                    # idle for an interval: the no-op
        newest = engine.oplog.last_ts
        assert client.local["oplog.rs"].find_one({"ts": newest}, {"_id": 0, "op": 1, "ns": 1, "o": 1}) == {
            "op": "n", "ns": "", "o": {"msg": "periodic noop"}}
        member.update_position(2, newest)
        assert stream.try_next() is None and stream.resume_token != after_event   # moved past the no-op
        PARAMETERS.set("writePeriodicNoops", False)
        try:
            assert not noops.check() and not noops.check()
        finally:
            PARAMETERS.set("writePeriodicNoops", True)
