"""A member's state around initial sync (commands/replicated_member.py): STARTUP2 while its
oplog is empty (it clones first), SECONDARY once it has history or ran replSetInitiate, and the
oplog sync's news (STARTUP2 -> SECONDARY, RECOVERING when too stale)."""
from __future__ import annotations

import pytest

from ginkgodb.commands import ReplicatedMember, TopologyWatch
from ginkgodb.commands.replica_set import MemberState
from ginkgodb.engine import Engine
from ginkgodb.storage import open_engine

ME = "127.0.0.1:27017"
CONFIG = {"_id": "rs0", "version": 1, "members": [{"_id": 0, "host": ME}, {"_id": 1, "host": "127.0.0.1:27018"}]}


@pytest.fixture
def member():
    engine = Engine(open_engine(None))
    # an unreachable etcd, and no coordinator started (load() is not called)
    m = ReplicatedMember(engine, "rs0", ME, TopologyWatch(), etcd_url="http://127.0.0.1:9")
    yield m
    m.sync.close()
    m.peers.close()
    engine.close()


def test_a_member_without_history_clones_first(member):
    assert member.engine.oplog.last_ts is None
    member.adopt_config(dict(CONFIG))
    assert member.state is MemberState.STARTUP2 and not member.electable()
    assert member.hello_fields(False)["secondary"] is False
    member._sync_state("SECONDARY")
    assert member.state is MemberState.SECONDARY and member.electable()
    member._sync_state("RECOVERING")
    assert member.state is MemberState.RECOVERING and not member.electable()


def test_the_initiator_is_secondary_even_after_its_coordinator_adopted_the_configuration(member):
    member.adopt_config(dict(CONFIG))          # its coordinator found the configuration in etcd first
    assert member.state is MemberState.STARTUP2
    member.engine.oplog.append_noop({"msg": "initiating set"})
    member._use_config(dict(CONFIG), initiator=True)
    assert member.state is MemberState.SECONDARY and member.electable()


def test_a_member_with_history_is_secondary_at_once(member):
    member.engine.oplog.append_noop({"msg": "new primary"})
    member.adopt_config(dict(CONFIG))
    assert member.state is MemberState.SECONDARY


def _maintenance(member, on) -> dict:
    from support.runner import decode_all

    from ginkgodb.commands import CommandContext, dispatch

    class Server:
        replica_set = member
        topology = member.watch
    ctx = CommandContext(engine=member.engine, server=Server())
    return decode_all(dispatch(ctx, {"replSetMaintenance": on, "$db": "admin"}))


def test_maintenance_mode_holds_a_secondary_in_recovering_until_every_call_is_undone(member):
    member.engine.oplog.append_noop({"msg": "new primary"})
    member.adopt_config(dict(CONFIG))
    assert _maintenance(member, True)["ok"] == 1.0 and _maintenance(member, True)["ok"] == 1.0
    assert member.state is MemberState.RECOVERING and not member.electable()
    assert member.hello_fields(False)["secondary"] is False
    member._sync_state("SECONDARY")                  # the oplog sync's news does not end it
    assert member.state is MemberState.RECOVERING
    assert _maintenance(member, False)["ok"] == 1.0 and member.state is MemberState.RECOVERING
    assert _maintenance(member, False)["ok"] == 1.0 and member.state is MemberState.SECONDARY
    again = _maintenance(member, False)
    assert (again["code"], again["errmsg"]) == (96, "already out of maintenance mode")
    wrong = _maintenance(member, "yes")
    assert wrong["codeName"] == "TypeMismatch"
    member.state = MemberState.PRIMARY
    refused = _maintenance(member, True)
    assert (refused["codeName"], refused["errmsg"]) == ("NotSecondary", "primaries can't modify maintenance mode")
