"""The Node.js `mongodb` driver and `mongosh`, unchanged, against `ginkgodb serve`."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from e2e.npm_tools import mongosh_binary

SCRIPTS = Path(__file__).resolve().parent / "scripts"


def node_env(node_modules: Path) -> dict:
    return {**os.environ, "NODE_PATH": str(node_modules)}


def test_node_driver_crud_cursors_indexes_errors(node_modules, server_uri):
    done = subprocess.run(["node", str(SCRIPTS / "node_driver.js"), server_uri], capture_output=True,
                          text=True, timeout=60, env=node_env(node_modules))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["ping"] == {"ok": 1}
    assert out["version"].startswith("7.0.")
    assert out["firstKey"] == "_id"  # stored first although the driver appended it
    assert out["insertMany"] == 2500 and out["count"] == 2501
    assert out["updateMany"] == 10 and out["deleteOne"] == 1
    assert out["top3"] == [9, 8, 7]
    assert out["iterated"] == 2500
    assert out["indexName"] == "i_1"
    assert out["dup"]["name"] == "MongoServerError" and out["dup"]["code"] == 11000
    assert out["bulk"]["name"] == "MongoBulkWriteError"
    assert (out["bulk"]["code"], out["bulk"]["inserted"], out["bulk"]["writeErrors"]) == (11000, 1, 2)
    assert out["explainReturned"] == 1 and "IXSCAN" in out["explainPlan"]
    assert out["aggregate"] == [{"_id": None, "n": 9}]
    assert (out["unknown"]["code"], out["unknown"]["codeName"]) == (59, "CommandNotFound")
    assert out["collections"] == ["things"]
    assert out["zlibCount"] == 2501  # read over a zlib-compressed connection


def mongosh(node_modules: Path, uri: str, script: str) -> str:
    done = subprocess.run([str(mongosh_binary(node_modules)), f"{uri}/test", "--quiet", "--norc",
                           "--eval", script],
                          capture_output=True, text=True, timeout=60, env=node_env(node_modules))
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.strip()


def test_mongosh_connects_and_shows_databases(node_modules, server_uri):
    mongosh(node_modules, server_uri, "db.getSiblingDB('e2e_shell_dbs').c.insertOne({a: 1})")
    shown = mongosh(node_modules, server_uri, "show dbs")
    assert "e2e_shell_dbs" in shown
    assert "test" in mongosh(node_modules, server_uri, "use test")


def test_mongosh_crud_indexes_explain_stats_drop(node_modules, server_uri):
    script = """
      const d = db.getSiblingDB('e2e_shell');
      d.dropDatabase();
      d.c.insertOne({a: 0, b: 'x'});
      for (let i = 1; i < 20; i++) d.c.insertOne({a: i});
      const out = {};
      out.firstKey = Object.keys(d.c.findOne({b: 'x'}))[0];
      out.sorted = d.c.find({}, {_id: 0, a: 1}).sort({a: -1}).limit(3).toArray();
      out.index = d.c.createIndex({a: 1});
      out.indexes = d.c.getIndexes().map(i => i.name);
      const plan = d.c.find({a: 5}).explain('executionStats');
      out.nReturned = plan.executionStats.nReturned;
      out.stage = JSON.stringify(plan.queryPlanner.winningPlan);
      out.dbCollections = d.stats().collections;
      out.collCount = d.c.stats().count;
      out.drop = d.c.drop();
      out.after = d.getCollectionNames();
      print(JSON.stringify(out));
    """
    out = json.loads(mongosh(node_modules, server_uri, script).splitlines()[-1])
    assert out["firstKey"] == "_id"
    assert out["sorted"] == [{"a": 19}, {"a": 18}, {"a": 17}]
    assert out["index"] == "a_1" and out["indexes"] == ["_id_", "a_1"]
    assert out["nReturned"] == 1 and "IXSCAN" in out["stage"]
    assert out["dbCollections"] == 1 and out["collCount"] == 20
    assert out["drop"] is True and out["after"] == []


def test_mongosh_reports_server_errors(node_modules, server_uri):
    text = mongosh(node_modules, server_uri,
                   "try { db.runCommand({nope: 1}); print('{}') }"
                   " catch (e) { print(JSON.stringify({code: e.code, name: e.codeName})) }")
    out = json.loads(text.splitlines()[-1])
    assert (out["code"], out["name"]) == (59, "CommandNotFound")
