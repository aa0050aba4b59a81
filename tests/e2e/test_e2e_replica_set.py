"""`ginkgodb serve --replSet rs0` with mongosh (rs.initiate(), rs.status(), rs.conf()) and the
Node.js driver (?replicaSet=rs0: RSPrimary, the streaming monitor)."""
from __future__ import annotations

import json

import pymongo
import pytest
from e2e.npm_tools import run_json_script
from e2e.test_e2e_node import mongosh

from ginkgodb.server.testing import running_server


@pytest.fixture
def rs_address(tmp_path):
    """A server started with --replSet rs0, not initiated yet."""
    with running_server(str(tmp_path / "data"), subprocess=True, quiet=True, replSet="rs0") as address:
        yield address


@pytest.fixture
def initiated(rs_address):
    host, port = rs_address
    with pymongo.MongoClient(host, port, directConnection=True) as c:
        c.admin.command("replSetInitiate")
    return rs_address


def test_mongosh_initiates_and_shows_the_set(node_modules, rs_address):
    host, port = rs_address
    uri = f"mongodb://{host}:{port}"
    script = """
      const out = {};
      try { rs.status(); } catch (e) { out.before = e.codeName; }
      const init = rs.initiate();
      out.init = {ok: init.ok, info2: init.info2, me: init.me};
      try { rs.initiate(); } catch (e) { out.again = e.codeName; }
      const s = rs.status();
      out.status = {set: s.set, myState: s.myState, members: s.members.map(m => [m.name, m.stateStr, m.self])};
      const c = rs.conf();
      out.conf = {id: c._id, version: c.version, hosts: c.members.map(m => m.host)};
      out.hello = {setName: db.hello().setName, primary: db.hello().isWritablePrimary};
      print(JSON.stringify(out));
    """
    out = json.loads(mongosh(node_modules, uri, script).splitlines()[-1])
    me = f"127.0.0.1:{port}"
    assert out["before"] == "NotYetInitialized"
    assert out["init"] == {"ok": 1, "me": me,
                           "info2": "no configuration specified. Using a default configuration for the set"}
    assert out["again"] == "AlreadyInitialized"
    assert out["status"] == {"set": "rs0", "myState": 1, "members": [[me, "PRIMARY", True]]}
    assert out["conf"] == {"id": "rs0", "version": 1, "hosts": [me]}
    assert out["hello"] == {"setName": "rs0", "primary": True}


def test_node_driver_discovers_the_primary_and_streams_its_monitor(node_modules, initiated):
    host, port = initiated
    out = run_json_script(node_modules, "node_replica_set.js", f"mongodb://{host}:{port}/?replicaSet=rs0")
    assert out["found"] == {"_id": 1, "n": "one"}
    assert out["setName"] == "rs0" and out["primary"] is True
    assert out["before"] == "ReplicaSetWithPrimary" and out["servers"] == ["RSPrimary"]
    assert out["sawNoPrimary"] is True and out["backToPrimary"] is True
    assert out["heartbeats"]["failed"] == []
    assert out["heartbeats"]["awaited"] >= 2
