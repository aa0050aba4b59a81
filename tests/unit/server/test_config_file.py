"""`ginkgodb serve --config FILE`: mongod's YAML layout mapped to serve's options; unknown keys
are errors naming the key; the command line wins over the file."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pymongo
import pytest

from ginkgodb.server.config_file import ConfigFileError, load

ROOT = str(Path(__file__).resolve().parents[3])


def _write(tmp_path, text: str) -> str:
    path = tmp_path / "ginkgod.yaml"
    path.write_text(textwrap.dedent(text))
    return str(path)


def test_a_mongod_configuration_maps_to_serve_options(tmp_path):
    options = load(_write(tmp_path, """
        net:
          port: 27555
          bindIp: 127.0.0.1,::1
          tls:
            mode: requireTLS
            certificateKeyFile: /etc/ssl/server.pem
            certificateKeyFilePassword: pem-pw
            CAFile: /etc/ssl/ca.pem
            CRLFile: /etc/ssl/crl.pem
        storage:
          dbPath: /var/lib/ginkgo
        security:
          authorization: enabled
        systemLog:
          destination: file
          path: /var/log/ginkgo.log
          logAppend: true
          verbosity: 1
        operationProfiling:
          slowOpThresholdMs: 50
        replication:
          replSetName: rs0
          oplogSizeMB: 128
        setParameter:
          enableTestCommands: true
          ttlMonitorSleepSecs: 5
    """))
    assert options == {
        "port": 27555, "bind": "127.0.0.1,::1", "tls_mode": "requireTLS",
        "tls_certificate_key_file": "/etc/ssl/server.pem", "tls_certificate_key_file_password": "pem-pw",
        "tls_ca_file": "/etc/ssl/ca.pem", "tls_crl_file": "/etc/ssl/crl.pem", "dbpath": "/var/lib/ginkgo", "auth": True,
        "logpath": "/var/log/ginkgo.log", "logappend": True, "log_level": "debug", "slow_ms": 50,
        "repl_set": "rs0", "oplog_size_mb": 128,
        "set_parameters": ["enableTestCommands=true", "ttlMonitorSleepSecs=5"]}


@pytest.mark.parametrize("text, message", [
    ("net:\n  port: 1\n  serviceExecutor: adaptive\n", "Unrecognized option: net.serviceExecutor"),
    ("processManagement:\n  fork: true\n", "Unrecognized option: processManagement.fork"),
    ("net:\n  port: '27017'\n", "net.port must be an integer"),
    ("security:\n  authorization: yes\n", "security.authorization must be 'enabled' or 'disabled'"),
    ("systemLog:\n  destination: file\n", "systemLog.path is required"),
    ("systemLog:\n  destination: syslog\n", "syslog is not supported"),
    ("operationProfiling:\n  mode: all\n", "only 'off' is supported"),
    ("net: [1, 2\n", "Error parsing YAML config file"),
])
def test_what_a_configuration_may_not_say(tmp_path, text, message):
    with pytest.raises(ConfigFileError, match=message):
        load(_write(tmp_path, text))


def test_serve_reads_its_configuration_and_the_command_line_wins(tmp_path):
    log = tmp_path / "server.log"
    path = _write(tmp_path, f"""
        net:
          port: 1
        storage:
          dbPath: {tmp_path / 'data'}
        systemLog:
          destination: file
          path: {log}
    """)
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code = "import sys; from ginkgodb.cli import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.Popen([sys.executable, "-c", code, "serve", "--config", path, "--port", str(port)],
                            env={"PYTHONPATH": ROOT, "PATH": "/usr/bin:/bin"}, cwd=str(tmp_path),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        client = pymongo.MongoClient("127.0.0.1", port, serverSelectionTimeoutMS=20_000)
        client.t.c.insert_one({"x": 1})
        opts = client.admin.command("getCmdLineOpts")["parsed"]
        assert opts["storage"]["dbPath"] == str(tmp_path / "data") and opts["net"]["port"] == port
        assert opts["systemLog"]["path"] == str(log)
        client.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert (tmp_path / "data").is_dir()
    assert '"ginkgodb starting"' in log.read_text()


def test_a_bad_configuration_stops_serve_with_exit_code_2(tmp_path):
    path = _write(tmp_path, "net:\n  bogus: 1\n")
    code = "import sys; from ginkgodb.cli import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run([sys.executable, "-c", code, "serve", "--config", path], env={"PYTHONPATH": ROOT},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "Unrecognized option: net.bogus" in done.stderr
