"""replSetInitiate's checks of a configuration of several members (commands/replicated_member.py),
through dispatch; the checks run before anything reaches etcd or the other members."""
from __future__ import annotations

import pytest
from support.runner import decode_all

from ginkgodb.commands import CommandContext, ReplicatedMember, TopologyWatch, dispatch
from ginkgodb.engine import Engine
from ginkgodb.storage import open_engine

ME = "127.0.0.1:27017"


class Server:
    def __init__(self, engine):
        self.topology = TopologyWatch()
        # an unreachable etcd: the checks below fail before any call to it
        self.replica_set = ReplicatedMember(engine, "rs0", ME, self.topology, etcd_url="http://127.0.0.1:9")


@pytest.fixture
def node():
    engine = Engine(open_engine(None))
    server = Server(engine)
    yield CommandContext(engine=engine, server=server)
    server.replica_set.close()
    engine.close()


def initiate(ctx, members, **settings):
    config = {"_id": "rs0", "members": members}
    if settings:
        config["settings"] = settings
    return decode_all(dispatch(ctx, {"replSetInitiate": config, "$db": "admin"}))


OTHER = {"_id": 1, "host": "127.0.0.1:27018"}


@pytest.mark.parametrize("members, code, text", [
    ([{"_id": 0, "host": ME}, {"_id": 0, "host": "127.0.0.1:27018"}], 93, "same _id"),
    ([{"_id": 0, "host": ME}, {"_id": 1, "host": ME}], 93, "same host"),
    ([{"_id": 0, "host": "127.0.0.1:27019"}, OTHER], 74, "maps to this node"),
    ([{"_id": 0, "host": ME}, {**OTHER, "hidden": True}], 93, "priority must be 0 when hidden=true"),
    ([{"_id": 0, "host": ME}, {**OTHER, "arbiterOnly": True}], 238, "arbiters"),
    ([{"_id": 0, "host": ME}, {**OTHER, "secondaryDelaySecs": 60}], 93, "priority must be 0 when secondaryDelaySecs"),
    ([{"_id": 0, "host": ME}, {**OTHER, "secondaryDelaySecs": -1, "priority": 0}], 2, "out of range"),
    ([{"_id": 0, "host": ME}, {**OTHER, "votes": 2}], 2, "votes"),
    ([{"_id": 0, "host": ME, "priority": 0}, {**OTHER, "priority": 0}], 93, "priority > 0"),
    ([{"_id": 0, "host": ME}, {**OTHER, "color": "red"}], 40415, "unknown field"),
])
def test_bad_configurations_are_refused_as_mongod(node, members, code, text):
    reply = initiate(node, members)
    assert reply["ok"] == 0 and reply["code"] == code and text in reply["errmsg"], reply
    assert node.server.replica_set.config is None          # nothing was kept


def test_tag_set_write_concern_modes_are_not_implemented(node):
    reply = initiate(node, [{"_id": 0, "host": ME}, OTHER], getLastErrorModes={"dc2": {"dc": 2}})
    assert reply["code"] == 238 and "getLastErrorModes" in reply["errmsg"]


def test_an_unreachable_member_fails_the_quorum_check(node):
    reply = initiate(node, [{"_id": 0, "host": ME}, {"_id": 1, "host": "127.0.0.1:9"}])
    assert reply["code"] == 74 and "quorum check failed" in reply["errmsg"]
