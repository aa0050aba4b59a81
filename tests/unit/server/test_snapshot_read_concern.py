"""readConcern snapshot outside transactions on a replica-set member, as drivers' snapshot
sessions use it: the first read reports atClusterTime, later reads at it see that snapshot."""
from __future__ import annotations

import pymongo
import pytest
from pymongo.errors import OperationFailure

from ginkgodb.server.testing import running_server


@pytest.fixture(scope="module")
def client():
    with running_server(None, repl_set="rs0") as (host, port):
        with pymongo.MongoClient(host, port, directConnection=True) as admin:
            admin.admin.command("replSetInitiate")
        with pymongo.MongoClient(f"mongodb://{host}:{port}/?replicaSet=rs0") as c:
            yield c


def test_a_snapshot_session_reads_one_point_in_time(client):
    coll = client.snap.c
    coll.drop()
    coll.insert_many([{"_id": i, "k": i % 2} for i in range(4)])
    with client.start_session(snapshot=True) as s:
        assert len(list(coll.find({}, session=s))) == 4
        coll.insert_one({"_id": 9, "k": 1})
        coll.delete_one({"_id": 0})
        assert sorted(d["_id"] for d in coll.find({}, session=s)) == [0, 1, 2, 3]
        assert coll.count_documents({}, session=s) == 4
        assert sorted(coll.distinct("_id", session=s)) == [0, 1, 2, 3]
        assert [d["n"] for d in coll.aggregate([{"$count": "n"}], session=s)] == [4]
    assert sorted(d["_id"] for d in coll.find()) == [1, 2, 3, 9]


def test_the_first_snapshot_read_reports_its_cluster_time(client):
    client.snap.c.insert_one({})
    reply = client.snap.command("find", "c", readConcern={"level": "snapshot"})
    at = reply["cursor"]["atClusterTime"]
    again = client.snap.command("distinct", "c", key="_id", readConcern={"level": "snapshot", "atClusterTime": at})
    assert again["atClusterTime"] == at


def test_what_snapshot_reads_refuse(client):
    client.snap.create_collection("capped", capped=True, size=4096)
    with pytest.raises(OperationFailure) as capped:
        client.snap.command("find", "capped", readConcern={"level": "snapshot"})
    assert capped.value.code == 246  # SnapshotUnavailable, as mongod
    with pytest.raises(OperationFailure) as count:
        client.snap.command("count", "c", readConcern={"level": "snapshot"})
    assert count.value.code == 72
    with pytest.raises(OperationFailure) as out:
        client.snap.command("aggregate", "c", pipeline=[{"$out": "copy"}], cursor={},
                            readConcern={"level": "snapshot"})
    assert out.value.code == 72
    assert "copy" not in client.snap.list_collection_names()
