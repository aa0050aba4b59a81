"""The Node.js driver and mongosh, unchanged, against `ginkgodb serve --auth --tlsMode requireTLS`:
SCRAM-SHA-256 and SCRAM-SHA-1 over TLS, a wrong password, mongosh --username/--password."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pymongo
import pytest
from e2e.npm_tools import mongosh_binary

from ginkgodb.server.testing import _wait_for_port

pytest.importorskip("cryptography", reason="the TLS tests make their certificates with cryptography")
from unit.server.certs import make_pki  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

NODE_SCRIPT = """
const { MongoClient } = require('mongodb');
(async () => {
  const [uri, ca] = process.argv.slice(1);
  const out = {};
  for (const mech of ['SCRAM-SHA-256', 'SCRAM-SHA-1', 'DEFAULT']) {
    const opts = { tls: true, tlsCAFile: ca, serverSelectionTimeoutMS: 5000 };
    if (mech !== 'DEFAULT') opts.authMechanism = mech;
    const c = new MongoClient(uri.replace('//', '//app:apppw@') + '/?authSource=admin', opts);
    await c.connect();
    await c.db('sec').collection('c').insertOne({ mech });
    out[mech] = (await c.db('admin').command({ connectionStatus: 1 })).authInfo.authenticatedUsers;
    await c.close();
  }
  const bad = new MongoClient(uri.replace('//', '//app:wrong@') + '/?authSource=admin',
                              { tls: true, tlsCAFile: ca, serverSelectionTimeoutMS: 3000 });
  try { await bad.connect(); await bad.db('sec').command({ ping: 1 }); out.bad = 'connected'; }
  catch (e) { out.bad = { name: e.name, code: e.code }; }
  await bad.close();
  const ro = new MongoClient(uri.replace('//', '//reader:readerpw@') + '/?authSource=sec',
                             { tls: true, tlsCAFile: ca });
  out.read = (await ro.db('sec').collection('c').countDocuments({}));
  try { await ro.db('sec').collection('c').insertOne({}); out.denied = 'inserted'; }
  catch (e) { out.denied = { code: e.code, codeName: e.codeName }; }
  await ro.close();
  console.log(JSON.stringify(out));
})().catch((e) => { console.error(e); process.exit(1); });
"""


@pytest.fixture(scope="module")
def secure_server(tmp_path_factory):
    pki = make_pki(tmp_path_factory.mktemp("pki"))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "ginkgodb.cli", "serve", "--port", "0", "--bind_ip", "127.0.0.1",
                             "--in-memory", "--quiet", "--auth", "--tlsMode", "requireTLS",
                             "--tlsCertificateKeyFile", pki["server"]],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        port = _wait_for_port(proc)
        first = pymongo.MongoClient("127.0.0.1", port, tls=True, tlsCAFile=pki["ca"])
        first.admin.command("createUser", "app", pwd="apppw", roles=["root"])
        app = pymongo.MongoClient("127.0.0.1", port, tls=True, tlsCAFile=pki["ca"], username="app", password="apppw")
        app.sec.command("createUser", "reader", pwd="readerpw", roles=["read"])
        yield f"mongodb://127.0.0.1:{port}", pki
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)


def test_node_driver_scram_over_tls(node_modules, secure_server):
    uri, pki = secure_server
    done = subprocess.run(["node", "-e", NODE_SCRIPT, uri, pki["ca"]], capture_output=True, text=True, timeout=90,
                          env={**os.environ, "NODE_PATH": str(node_modules)})
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    for mech in ("SCRAM-SHA-256", "SCRAM-SHA-1", "DEFAULT"):
        assert out[mech] == [{"user": "app", "db": "admin"}]
    assert out["bad"]["code"] == 18
    assert out["read"] == 3
    assert out["denied"] == {"code": 13, "codeName": "Unauthorized"}


def test_mongosh_username_password_over_tls(node_modules, secure_server):
    uri, pki = secure_server
    shell = [str(mongosh_binary(node_modules)), f"{uri}/sec", "--quiet", "--norc", "--tls", "--tlsCAFile", pki["ca"]]
    env = {**os.environ, "NODE_PATH": str(node_modules)}
    done = subprocess.run([*shell, "--username", "app", "--password", "apppw", "--authenticationDatabase", "admin",
                           "--eval", "db.c.insertOne({shell: 1}); "
                                     "print(JSON.stringify(db.runCommand({connectionStatus: 1}).authInfo))"],
                          capture_output=True, text=True, timeout=90, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert '"authenticatedUsers":[{"user":"app","db":"admin"}]' in done.stdout
    denied = subprocess.run([*shell, "--eval", "db.c.findOne()"], capture_output=True, text=True, timeout=90, env=env)
    assert denied.returncode != 0 and "requires authentication" in denied.stdout + denied.stderr
    wrong = subprocess.run([*shell, "--username", "app", "--password", "nope", "--authenticationDatabase", "admin",
                            "--eval", "db.c.findOne()"], capture_output=True, text=True, timeout=90, env=env)
    assert wrong.returncode != 0 and "Authentication failed" in wrong.stdout + wrong.stderr


def test_mongosh_user_helpers_with_the_localhost_exception(node_modules):
    from ginkgodb.server.testing import running_server
    env = {**os.environ, "NODE_PATH": str(node_modules)}
    shell = str(mongosh_binary(node_modules))

    def run(uri: str, script: str) -> str:
        done = subprocess.run([shell, uri, "--quiet", "--norc", "--eval", script], capture_output=True, text=True,
                              timeout=90, env=env)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout
    with running_server(auth=True, quiet=True) as (host, port):
        base = f"mongodb://{host}:{port}"
        run(f"{base}/admin", 'db.createUser({user: "admin", pwd: "s3cret", roles: ["root"]})')
        out = run(f"mongodb://admin:s3cret@{host}:{port}/shop?authSource=admin",
                  'db.c.insertOne({a: 1}); db.createUser({user: "u2", pwd: "pw", roles: ["read"]}); '
                  'db.updateUser("u2", {pwd: "pw2"}); print(JSON.stringify(db.getUsers().users.map(u => u.user)))')
        assert '["u2"]' in out
        assert '"a":1' in run(f"{base}/shop", 'db.auth("u2", "pw2"); print(JSON.stringify(db.c.findOne({}, {_id: 0})))')
