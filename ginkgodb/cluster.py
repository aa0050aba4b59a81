"""`ginkgodb cluster start|stop|status|restart-member`: a replica set on one machine.

`start` runs an etcd (the `etcd` found on PATH, or /usr/bin/etcd: Debian's `etcd-server`) and N
members on loopback ports P..P+N-1 (`ginkgodb serve --replSet NAME --etcd URL`), initiates the
set, waits for a primary and prints the connection string. Everything lives under `--dir`: the
etcd data, one data directory and log per member, and `cluster.json` (ports, pids, the member
command lines) that the other subcommands read. It is how a user tries a replica set and how
the tests start one.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional

STATE_FILE = "cluster.json"
ETCD_LOCATIONS = ("/usr/bin/etcd", "/usr/local/bin/etcd")
START_TIMEOUT = 30.0


class ClusterError(Exception):
    pass


def find_etcd() -> Optional[str]:
    found = shutil.which("etcd")
    if found:
        return found
    return next((p for p in ETCD_LOCATIONS if os.access(p, os.X_OK)), None)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:   # a zombie child of this process is not alive
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def _spawn(argv: list[str], log: Path) -> int:
    with open(log, "ab") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    return proc.pid


def _wait_port(port: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.1)
    return False


def _hello(port: int, timeout_ms: int = 1000) -> Optional[dict]:
    import pymongo
    client: pymongo.MongoClient = pymongo.MongoClient(f"127.0.0.1:{port}", directConnection=True,
                                                      serverSelectionTimeoutMS=timeout_ms)
    try:
        return dict(client.admin.command("hello"))
    except pymongo.errors.PyMongoError:
        return None
    finally:
        client.close()


def member_argv(state: dict, n: int) -> list[str]:
    port = state["port"] + n
    etcd = (state.get("member_etcd_urls") or {}).get(str(n), state["etcd_url"])
    return [sys.executable, "-m", "ginkgodb", "serve", "--port", str(port), "--bind", "127.0.0.1",
            "--dbpath", str(Path(state["dir"]) / f"member{n}"), "--replSet", state["name"],
            "--etcd", etcd, *state.get("serve_args", [])]


def connection_string(state: dict) -> str:
    hosts = ",".join(f"127.0.0.1:{state['port'] + n}" for n in range(state["nodes"]))
    return f"mongodb://{hosts}/?replicaSet={state['name']}"


def _save(state: dict) -> None:
    path = Path(state["dir"]) / STATE_FILE
    path.write_text(json.dumps(state, indent=2))


def load_state(directory: str) -> dict:
    path = Path(directory) / STATE_FILE
    if not path.exists():
        raise ClusterError(f"no cluster in {directory} (no {STATE_FILE}): start one with `ginkgodb cluster start`")
    state: dict = json.loads(path.read_text())
    return state


def start(name: str, nodes: int, port: int, directory: str, tags: Optional[list] = None,
          serve_args: Optional[list[str]] = None, member_etcd: Optional[Callable[[int, str], str]] = None) -> dict:
    """Start etcd and the members, initiate, wait for a primary; returns the cluster's state.
    `member_etcd(n, etcd_url)`: the URL member n reaches etcd by (the fault tests put a proxy
    between a member and etcd)."""
    if nodes < 1:
        raise ClusterError("--nodes must be at least 1")
    if tags is not None and (not isinstance(tags, list) or len(tags) != nodes
                             or not all(isinstance(t, dict) for t in tags)):
        raise ClusterError(f"--tags must be a JSON list of {nodes} documents, one per member")
    etcd = find_etcd()
    if etcd is None:
        raise ClusterError("etcd not found on PATH nor in /usr/bin: install it (Debian: apt-get install etcd-server)")
    root = Path(directory).resolve()
    root.mkdir(parents=True, exist_ok=True)
    if (root / STATE_FILE).exists() and any(_alive(p) for p in _pids(load_state(str(root)))):
        raise ClusterError(f"a cluster is already running in {root}: `ginkgodb cluster stop --dir {root}` first")
    previous = load_state(str(root)) if (root / STATE_FILE).exists() else None
    if previous is not None:   # started before in this directory: etcd keeps its ports (its data names them)
        client_port, peer_port = previous["etcd_ports"]
    else:
        client_port, peer_port = _free_port(), _free_port()
    etcd_url = f"http://127.0.0.1:{client_port}"
    state: dict[str, Any] = {"name": name, "nodes": nodes, "port": port, "dir": str(root), "etcd_url": etcd_url,
                             "etcd_argv": [etcd, "--name", "ginkgodb", "--data-dir", str(root / "etcd"),
                                           "--listen-client-urls", etcd_url, "--advertise-client-urls", etcd_url,
                                           "--listen-peer-urls", f"http://127.0.0.1:{peer_port}",
                                           "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer_port}",
                                           "--initial-cluster", f"ginkgodb=http://127.0.0.1:{peer_port}"],
                             "etcd_ports": [client_port, peer_port],
                             "tags": tags, "serve_args": list(serve_args or []), "pids": {}}
    state["pids"]["etcd"] = _spawn(state["etcd_argv"], root / "etcd.log")
    _save(state)
    if not _wait_port(client_port, START_TIMEOUT):
        raise ClusterError(f"etcd did not start: see {root / 'etcd.log'}")
    if member_etcd is not None:
        state["member_etcd_urls"] = {str(n): member_etcd(n, etcd_url) for n in range(nodes)}
    for n in range(nodes):
        state["pids"][str(n)] = _spawn(member_argv(state, n), root / f"member{n}.log")
        _save(state)
    for n in range(nodes):
        if not _wait_port(port + n, START_TIMEOUT):
            raise ClusterError(f"member {n} did not start: see {root / f'member{n}.log'}")
    members = []
    for n in range(nodes):
        member: dict[str, Any] = {"_id": n, "host": f"127.0.0.1:{port + n}"}
        if tags is not None and tags[n]:
            member["tags"] = tags[n]
        members.append(member)
    import pymongo
    first: pymongo.MongoClient = pymongo.MongoClient(f"127.0.0.1:{port}", directConnection=True)
    try:
        if "setName" not in first.admin.command("hello"):   # a restarted set keeps its configuration
            first.admin.command("replSetInitiate", {"_id": name, "members": members})
    finally:
        first.close()
    wait_for_primary(state, START_TIMEOUT)
    return state


def wait_for_primary(state: dict, timeout: float) -> int:
    """The member number of the primary, once there is one."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for n in range(state["nodes"]):
            hello = _hello(state["port"] + n, 300)
            if hello and hello.get("isWritablePrimary"):
                return n
        time.sleep(0.2)
    raise ClusterError(f"no primary within {timeout:.0f} s")


def _pids(state: dict) -> list[int]:
    return [int(p) for p in state.get("pids", {}).values() if p]


def _stop_pid(pid: int, timeout: float = 15.0) -> None:
    if not _alive(pid):
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)


def stop(directory: str) -> None:
    state = load_state(directory)
    for key, pid in state["pids"].items():
        if key != "etcd" and pid:
            _stop_pid(int(pid))
    if state["pids"].get("etcd"):
        _stop_pid(int(state["pids"]["etcd"]))
    state["pids"] = {}
    _save(state)


def restart_member(directory: str, n: int) -> None:
    state = load_state(directory)
    if not 0 <= n < state["nodes"]:
        raise ClusterError(f"--member must be 0..{state['nodes'] - 1}")
    pid = state["pids"].get(str(n))
    if pid:
        _stop_pid(int(pid))
    root = Path(state["dir"])
    state["pids"][str(n)] = _spawn(member_argv(state, n), root / f"member{n}.log")
    _save(state)
    if not _wait_port(state["port"] + n, START_TIMEOUT):
        raise ClusterError(f"member {n} did not start: see {root / f'member{n}.log'}")


def status(directory: str) -> list[dict]:
    state = load_state(directory)
    rows = []
    for n in range(state["nodes"]):
        pid = state["pids"].get(str(n))
        hello = _hello(state["port"] + n) if pid and _alive(int(pid)) else None
        role = ("down" if hello is None else "PRIMARY" if hello.get("isWritablePrimary")
                else "SECONDARY" if hello.get("secondary") else "OTHER")
        rows.append({"member": n, "host": f"127.0.0.1:{state['port'] + n}", "pid": pid, "state": role})
    return rows


# ---------------------------------------------------------------------- the command line
def register(sub: Any) -> None:
    cluster = sub.add_parser("cluster", help="start, stop or inspect a replica set on this machine",
                             description="A replica set on loopback: an etcd and N ginkgodb members.")
    actions = cluster.add_subparsers(dest="cluster_command", metavar="ACTION", required=True)
    begin = actions.add_parser("start", help="start etcd and the members, initiate, wait for a primary")
    begin.add_argument("--name", default="rs0", help="the replica set name (default %(default)s)")
    begin.add_argument("--nodes", type=int, default=3, help="how many members (default %(default)s)")
    begin.add_argument("--port", type=int, default=27017, help="the first member's port; member N is on PORT+N")
    begin.add_argument("--dir", required=True, help="the directory for etcd, the members' data and logs")
    begin.add_argument("--shards", type=int, default=0,
                       help="a sharded cluster: this many shards (replica sets shard0.. of --nodes members on "
                            "ports PORT+1..) and a router on PORT (docs/design/sharding.md)")
    begin.add_argument("--tags", help="a JSON list of tag documents, one per member, e.g. "
                                      "'[{\"dc\": \"east\"}, {\"dc\": \"west\"}, {}]'")
    for action, text in (("stop", "stop the members and etcd"), ("status", "each member's state")):
        p = actions.add_parser(action, help=text)
        p.add_argument("--dir", required=True)
    again = actions.add_parser("restart-member", help="stop member N (if running) and start it again")
    again.add_argument("--member", type=int, required=True, help="0-based: the member on port PORT+N")
    again.add_argument("--dir", required=True)
    cluster.set_defaults(tool_main=main)


def main(args: argparse.Namespace) -> int:
    try:
        if args.cluster_command == "start":
            tags = json.loads(args.tags) if args.tags else None
            state = start(args.name, args.nodes, args.port, args.dir, tags)
            print(connection_string(state))
        elif args.cluster_command == "stop":
            stop(args.dir)
        elif args.cluster_command == "status":
            for row in status(args.dir):
                print(f"member {row['member']}  {row['host']}  {row['state']}  pid {row['pid']}")
        elif args.cluster_command == "restart-member":
            restart_member(args.dir, args.member)
        return 0
    except (ClusterError, json.JSONDecodeError) as exc:
        print(f"ginkgodb cluster: {exc}", file=sys.stderr)
        return 2
