"""A replica set of one through dispatch: hello before and after replSetInitiate, the replSet
commands and their errors, the configuration kept across restarts, cluster times on replies,
afterClusterTime, and what a node that is not primary refuses."""
from __future__ import annotations

import datetime
import threading
import time

import pytest
from bson.binary import Binary
from bson.int64 import Int64
from bson.objectid import ObjectId
from bson.timestamp import Timestamp
from support.runner import decode_all

from ginkgodb.commands import CommandContext, ReplicaSetMember, TopologyWatch, dispatch
from ginkgodb.commands.replica_set import election_id
from ginkgodb.engine import Engine

HOST = "127.0.0.1:27017"


class MemberServer:
    """The two facts commands read of a server with --replSet."""

    def __init__(self, engine, name="rs0", host=HOST):
        self.topology = TopologyWatch()
        self.replica_set = ReplicaSetMember(engine, name, host, self.topology)
        self.replica_set.load()


class Node:
    def __init__(self, engine, **kw):
        self.server = MemberServer(engine, **kw)
        self.member = self.server.replica_set
        self.ctx = CommandContext(engine=engine, server=self.server)

    def raw(self, cmd, db="admin"):
        return decode_all(dispatch(self.ctx, {**cmd, "$db": db}))

    def ok(self, cmd, db="admin"):
        reply = self.raw(cmd, db)
        assert reply["ok"] == 1.0, reply
        return reply

    def error(self, cmd, db="admin"):
        reply = self.raw(cmd, db)
        assert reply["ok"] == 0.0, reply
        return reply


@pytest.fixture
def node(engine):
    n = Node(engine)
    yield n
    n.member.close()


@pytest.fixture
def primary(node):
    node.ok({"replSetInitiate": {}})
    return node


def _codes(reply):
    return reply["code"], reply["codeName"], reply["errmsg"]


# -- before replSetInitiate ----------------------------------------------------------------------
def test_an_uninitialized_member_says_so_in_hello(node):
    reply = node.ok({"hello": 1})
    assert list(reply)[:5] == ["topologyVersion", "isWritablePrimary", "secondary", "info", "isreplicaset"]
    assert reply["isWritablePrimary"] is False and reply["secondary"] is False
    assert reply["info"] == "Does not have a valid replica set config" and reply["isreplicaset"] is True
    assert "setName" not in reply and "$clusterTime" not in reply
    assert node.ok({"isMaster": 1})["ismaster"] is False


def test_before_initiate_status_and_config_answer_94(node):
    for cmd in ({"replSetGetStatus": 1}, {"replSetGetConfig": 1}, {"replSetStepDown": 60},
                {"replSetFreeze": 0}):
        reply = node.error(cmd)
        assert _codes(reply) == (94, "NotYetInitialized", "no replset config has been received")
        assert reply["info"] == "run rs.initiate(...) if not yet done for the set"


def test_before_initiate_writes_and_reads_are_refused_as_by_a_non_primary(node):
    reply = node.error({"insert": "c", "documents": [{}]}, db="test")
    assert _codes(reply) == (10107, "NotWritablePrimary", "not primary")
    assert set(reply["topologyVersion"]) == {"processId", "counter"}
    assert _codes(node.error({"find": "c"}, db="test")) == (13435, "NotPrimaryNoSecondaryOk",
                                                            "not primary and secondaryOk=false")
    reply = node.error({"find": "c", "$readPreference": {"mode": "secondaryPreferred"}}, db="test")
    assert _codes(reply) == (13436, "NotPrimaryOrSecondary", "node is not in primary or recovering state")
    node.ok({"insert": "c", "documents": [{}]}, db="local")  # the local database is always writable
    node.ok({"ping": 1})


# -- replSetInitiate -----------------------------------------------------------------------------
def test_initiate_without_a_configuration_makes_the_default_one(node):
    reply = node.ok({"replSetInitiate": {}})
    assert reply["info2"] == "no configuration specified. Using a default configuration for the set"
    assert reply["me"] == HOST
    assert node.member.is_primary and node.member.term == 1


def test_initiate_with_a_configuration(node):
    node.ok({"replSetInitiate": {"_id": "rs0", "members": [{"_id": 5, "host": "localhost:27017",
                                                           "tags": {"dc": "east"}, "priority": 2}]}})
    config = node.ok({"replSetGetConfig": 1})["config"]
    assert list(config) == ["_id", "version", "term", "members", "protocolVersion",
                            "writeConcernMajorityJournalDefault", "settings"]
    assert config["_id"] == "rs0" and config["version"] == 1 and config["term"] == 1
    assert config["members"] == [{"_id": 5, "host": "localhost:27017", "arbiterOnly": False, "buildIndexes": True,
                                  "hidden": False, "priority": 2, "tags": {"dc": "east"},
                                  "secondaryDelaySecs": 0, "votes": 1}]
    assert config["settings"]["electionTimeoutMillis"] == 10000
    assert isinstance(config["settings"]["replicaSetId"], ObjectId)
    assert node.ok({"hello": 1})["tags"] == {"dc": "east"}


def test_initiate_twice_answers_already_initialized(primary):
    reply = primary.error({"replSetInitiate": {}})
    assert _codes(reply) == (23, "AlreadyInitialized", "already initialized")
    assert reply["info"] == "try querying local.system.replset to see current configuration"


@pytest.mark.parametrize("config, code, message", [
    ({"_id": "other", "members": [{"_id": 0, "host": HOST}]}, 93,
     "Attempting to initiate a replica set with name other, but command line reports rs0; rejecting"),
    ({"_id": "rs0", "members": [{"_id": 0, "host": "elsewhere.example:27017"}]}, 74,
     "No host described in new configuration with {version: 1, term: 0} for replica set rs0 maps to this node"),
    ({"_id": "rs0", "members": [{"_id": 0, "host": "127.0.0.1:27018"}]}, 74,
     "No host described in new configuration with {version: 1, term: 0} for replica set rs0 maps to this node"),
    ({"members": [{"_id": 0, "host": HOST}]}, 40414,
     "BSON field 'ReplSetConfig._id' is missing but a required field"),
    ({"_id": "rs0"}, 40414, "BSON field 'ReplSetConfig.members' is missing but a required field"),
    ({"_id": "rs0", "members": [{"_id": 0}]}, 40414, "BSON field 'MemberConfig.host' is missing but a required field"),
    ({"_id": "rs0", "members": [{"_id": 0, "host": HOST}], "colour": 1}, 40415,
     "BSON field 'ReplSetConfig.colour' is an unknown field."),
    ({"_id": "rs0", "members": []}, 93,
     "Replica set configuration must contain at least one non-arbiter member with priority > 0"),
])
def test_a_bad_configuration_is_refused_and_changes_nothing(node, config, code, message):
    reply = node.error({"replSetInitiate": config})
    assert (reply["code"], reply["errmsg"]) == (code, message)
    assert node.member.config is None
    assert node.ok({"find": "system.replset"}, db="local")["cursor"]["firstBatch"] == []


def test_a_configuration_of_several_members_is_not_implemented(node):
    reply = node.error({"replSetInitiate": {"_id": "rs0", "members": [{"_id": 0, "host": HOST},
                                                                      {"_id": 1, "host": "b:27017"}]}})
    assert reply["code"] == 238 and "--etcd" in reply["errmsg"]


def test_without_repl_set_the_commands_answer_76(run):
    admin = {"$db": "admin"}
    reply = run.error({"replSetInitiate": {}, **admin})
    assert _codes(reply) == (76, "NoReplicationEnabled", "This node was not started with replication enabled.")
    for cmd in ({"replSetGetStatus": 1}, {"replSetGetConfig": 1}, {"replSetStepDown": 60}):
        assert _codes(run.error({**cmd, **admin})) == (76, "NoReplicationEnabled", "not running with --replSet")


def test_replset_commands_run_against_admin_only(primary):
    assert primary.error({"replSetGetStatus": 1}, db="test")["code"] == 13


# -- a primary -----------------------------------------------------------------------------------
def test_hello_of_the_primary_is_mongods(primary):
    reply = primary.ok({"hello": 1})
    assert list(reply)[:10] == ["topologyVersion", "hosts", "setName", "setVersion", "isWritablePrimary",
                                "secondary", "primary", "me", "electionId", "lastWrite"]
    assert reply["hosts"] == [HOST] and reply["setName"] == "rs0" and reply["setVersion"] == 1
    assert reply["isWritablePrimary"] is True and reply["secondary"] is False
    assert reply["primary"] == reply["me"] == HOST
    assert reply["electionId"] == ObjectId("7fffffff0000000000000001")
    assert reply["topologyVersion"]["counter"] >= 1
    last = reply["lastWrite"]
    assert list(last) == ["opTime", "lastWriteDate", "majorityOpTime", "majorityWriteDate"]
    assert last["opTime"]["t"] == 1 and isinstance(last["opTime"]["ts"], Timestamp)
    assert isinstance(last["lastWriteDate"], datetime.datetime)
    assert "tags" not in reply  # mongod leaves out empty tags
    assert list(reply)[-3:] == ["ok", "$clusterTime", "operationTime"]
    assert reply["$clusterTime"]["signature"] == {"hash": Binary(b"\x00" * 20, 0), "keyId": 0}
    assert primary.ok({"isMaster": 1})["ismaster"] is True


def test_write_replies_carry_election_id_and_op_time(primary):
    reply = primary.ok({"insert": "c", "documents": [{"_id": 1}]}, db="test")
    assert list(reply) == ["n", "electionId", "opTime", "ok", "$clusterTime", "operationTime"]
    assert reply["electionId"] == election_id(1)
    assert reply["opTime"] == {"ts": reply["operationTime"], "t": 1}
    update = primary.ok({"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$set": {"a": 1}}}]}, db="test")
    assert list(update)[:4] == ["n", "electionId", "opTime", "nModified"]
    assert update["operationTime"] > reply["operationTime"]


def test_reads_and_errors_carry_the_cluster_time(primary):
    write = primary.ok({"insert": "c", "documents": [{}]}, db="test")
    read = primary.ok({"find": "c"}, db="test")
    assert read["operationTime"] == write["operationTime"] == read["$clusterTime"]["clusterTime"]
    assert "opTime" not in read
    error = primary.error({"find": 5}, db="test")
    assert error["operationTime"] == write["operationTime"]


def test_status_of_a_member_of_one(primary):
    status = primary.ok({"replSetGetStatus": 1})
    assert status["set"] == "rs0" and status["myState"] == 1 and status["term"] == 1
    assert status["syncSourceHost"] == "" and status["syncSourceId"] == -1
    assert set(status["optimes"]) >= {"lastCommittedOpTime", "appliedOpTime", "durableOpTime",
                                      "readConcernMajorityOpTime"}
    [member] = status["members"]
    assert (member["_id"], member["name"], member["state"], member["stateStr"], member["self"]) == (
        0, HOST, 1, "PRIMARY", True)
    assert member["health"] == 1 and member["configVersion"] == 1
    assert status["electionCandidateMetrics"]["electionTerm"] == 1


def test_get_config_with_commitment_status(primary):
    assert primary.ok({"replSetGetConfig": 1, "commitmentStatus": True})["commitmentStatus"] is True


def test_the_configuration_is_stored_in_the_local_database(primary):
    [stored] = primary.ok({"find": "system.replset"}, db="local")["cursor"]["firstBatch"]
    assert stored["_id"] == "rs0" and stored["members"][0]["host"] == HOST
    [election] = primary.ok({"find": "replset.election"}, db="local")["cursor"]["firstBatch"]
    assert election["term"] == 1


def test_the_configuration_survives_a_restart_and_the_member_elects_itself_again(tmp_path):
    engine = Engine.open(str(tmp_path / "data"))
    first = Node(engine)
    first.ok({"replSetInitiate": {}})
    replica_set_id = first.ok({"replSetGetConfig": 1})["config"]["settings"]["replicaSetId"]
    engine.close()
    engine = Engine.open(str(tmp_path / "data"))
    try:
        again = Node(engine)
        hello = again.ok({"hello": 1})
        assert hello["isWritablePrimary"] is True and hello["setName"] == "rs0"
        assert hello["electionId"] == election_id(2)  # a new election, a new term
        config = again.ok({"replSetGetConfig": 1})["config"]
        assert config["settings"]["replicaSetId"] == replica_set_id and config["term"] == 2
        assert again.error({"replSetInitiate": {}})["code"] == 23
    finally:
        engine.close()


def test_a_stored_configuration_of_another_set_leaves_the_member_removed(tmp_path):
    engine = Engine.open(str(tmp_path / "data"))
    Node(engine, name="first").ok({"replSetInitiate": {}})
    engine.close()
    engine = Engine.open(str(tmp_path / "data"))
    try:
        other = Node(engine, name="second")
        assert other.member.warnings and "reports set name of first" in other.member.warnings[0]
        hello = other.ok({"hello": 1})
        assert hello["isWritablePrimary"] is False and hello["info"] == "Does not have a valid replica set config"
        assert other.error({"replSetGetStatus": 1})["code"] == 93
        assert other.error({"replSetInitiate": {}})["code"] == 23
    finally:
        engine.close()


# -- step-down and freeze ------------------------------------------------------------------------
def test_step_down_without_force_fails_as_no_secondary_can_catch_up(primary):
    reply = primary.error({"replSetStepDown": 60, "secondaryCatchUpPeriodSecs": 0})
    assert (reply["code"], reply["codeName"]) == (262, "ExceededTimeLimit")
    assert reply["errmsg"].startswith("No electable secondaries caught up as of ")
    assert reply["errmsg"].endswith("Please use the replSetStepDown command with the argument {force: true} "
                                    "to force node to step down.")
    assert primary.member.is_primary


@pytest.mark.parametrize("cmd, message", [
    ({"replSetStepDown": 5}, "stepdown period must be longer than secondaryCatchUpPeriodSecs"),
    ({"replSetStepDown": 60, "secondaryCatchUpPeriodSecs": -1},
     "secondaryCatchUpPeriodSecs period must be a non-negative duration"),
])
def test_step_down_arguments_are_checked(primary, cmd, message):
    assert (primary.error(cmd)["code"], primary.error(cmd)["errmsg"]) == (2, message)


def test_forced_step_down_makes_a_secondary_that_elects_itself_again(primary):
    before = primary.member.watch.counter
    primary.ok({"replSetStepDown": 1, "force": True})
    hello = primary.ok({"hello": 1})
    assert hello["isWritablePrimary"] is False and hello["secondary"] is True
    assert "primary" not in hello and "electionId" not in hello and hello["setName"] == "rs0"
    assert hello["topologyVersion"]["counter"] == before + 1
    assert primary.ok({"replSetGetStatus": 1})["myState"] == 2
    assert _codes(primary.error({"insert": "c", "documents": [{}]}, db="test")) == (
        10107, "NotWritablePrimary", "not primary")
    assert _codes(primary.error({"find": "c"}, db="test"))[0] == 13435
    primary.ok({"find": "c", "$readPreference": {"mode": "secondary"}}, db="test")
    assert primary.error({"find": "c", "readConcern": {"level": "linearizable"},
                          "$readPreference": {"mode": "secondary"}}, db="test")["code"] == 10107
    assert primary.error({"replSetStepDown": 60, "force": True})["code"] == 10107
    until = time.monotonic() + 5
    while not primary.member.is_primary and time.monotonic() < until:
        time.sleep(0.05)
    hello = primary.ok({"hello": 1})
    assert hello["isWritablePrimary"] is True and hello["electionId"] == election_id(2)


def test_freeze_refuses_a_primary_and_unfreezing_a_secondary_elects_it(primary):
    reply = primary.error({"replSetFreeze": 30})
    assert _codes(reply) == (95, "NotSecondary",
                             "cannot freeze node when primary or running for election. state: Primary")
    primary.ok({"replSetStepDown": 60, "force": True})
    assert primary.ok({"replSetFreeze": 1})["warning"] == "you really want to freeze for only 1 second?"
    assert primary.ok({"replSetFreeze": 0})["info"] == "unfreezing"
    assert primary.member.is_primary and primary.member.term == 2


def test_reconfig_is_refused_as_not_implemented(primary):
    assert primary.error({"replSetReconfig": {"_id": "rs0", "members": []}})["code"] == 238


# -- read and write concerns on a member ---------------------------------------------------------
def test_after_cluster_time_reads_see_the_write_they_follow(primary):
    write = primary.ok({"insert": "c", "documents": [{"_id": 1}]}, db="test")
    read = primary.ok({"find": "c", "readConcern": {"level": "majority",
                                                    "afterClusterTime": write["operationTime"]}}, db="test")
    assert read["cursor"]["firstBatch"] == [{"_id": 1}]


def test_after_cluster_time_ahead_of_the_clock_is_refused(primary):
    ahead = Timestamp(int(time.time()) + 1000, 1)
    reply = primary.error({"find": "c", "readConcern": {"afterClusterTime": ahead}}, db="test")
    assert (reply["code"], reply["codeName"]) == (72, "InvalidOptions")
    assert reply["errmsg"].startswith("readConcern afterClusterTime value must not be greater than the current "
                                      "clusterTime. Requested clusterTime: ")


def test_gossiped_cluster_time_advances_the_clock(primary):
    ahead = Timestamp(int(time.time()) + 100, 7)
    gossip = {"clusterTime": ahead, "signature": {"hash": b"\x00" * 20, "keyId": Int64(0)}}
    reply = primary.ok({"find": "c", "$clusterTime": gossip, "readConcern": {"afterClusterTime": ahead}},
                       db="test")
    assert reply["operationTime"] == ahead
    write = primary.ok({"insert": "c", "documents": [{}]}, db="test")
    assert write["operationTime"] > ahead


def test_after_cluster_time_waits_for_a_write_still_committing(primary):
    engine = primary.ctx.engine
    primary.ok({"insert": "c", "documents": [{"_id": 0}]}, db="test")
    done = threading.Event()
    with engine.write() as batch:  # a writer holds the lock: the clock has ticked past the target
        target = engine.clock.tick()

        def read():
            primary.ok({"find": "c", "readConcern": {"afterClusterTime": target}}, db="test")
            done.set()
        reader = threading.Thread(target=read)
        reader.start()
        assert not done.wait(0.2)
        assert batch is not None
    assert done.wait(5)
    reader.join()


@pytest.mark.parametrize("rc, code", [
    ({"level": "local", "atClusterTime": Timestamp(1, 1)}, 72),   # atClusterTime needs snapshot
    ({"level": "snapshot", "atClusterTime": Timestamp(1, 1)}, 239),  # before the oldest kept snapshot
    ({"level": "available", "afterClusterTime": Timestamp(1, 1)}, 72),
    ({"afterClusterTime": 5}, 14),
])
def test_read_concerns_a_member_refuses(primary, rc, code):
    assert primary.error({"find": "c", "readConcern": rc}, db="test")["code"] == code


def test_linearizable_reads_on_the_primary(primary):
    primary.ok({"find": "c", "readConcern": {"level": "linearizable"}}, db="test")


def test_write_concern_of_more_members_than_there_are(primary):
    before = primary.ok({"count": "c"}, db="test")["n"]
    reply = primary.ok({"insert": "c", "documents": [{}], "writeConcern": {"w": 2}}, db="test")
    assert reply["n"] == 1  # the write is done, as mongod; its write concern is reported unmet
    assert _codes(reply["writeConcernError"]) == (100, "UnsatisfiableWriteConcern", "Not enough data-bearing nodes")
    assert primary.ok({"count": "c"}, db="test")["n"] == before + 1
    primary.ok({"insert": "c", "documents": [{}], "writeConcern": {"w": "majority"}}, db="test")


def test_a_standalone_still_refuses_cluster_times(run):
    reply = run.error({"find": "c", "readConcern": {"afterClusterTime": Timestamp(1, 1)}})
    assert reply["errmsg"] == "Cannot specify a cluster time on a standalone"
    assert "operationTime" not in run({"find": "c"})
