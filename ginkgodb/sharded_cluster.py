"""`ginkgodb cluster start --shards S --nodes N --port P --dir D`: a sharded cluster on one machine.

An etcd, S shards (replica sets `shard0`.. of N members each, on ports P+1..), one router on P,
every shard added to the router; prints the router's connection string. `D/cluster.json` holds
every pid, so `cluster stop|status` work as for a replica set (cluster.py).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Optional

from . import cluster as C


def shard_state(state: dict, i: int) -> dict:
    """Shard i as a replica-set state cluster.py's helpers understand."""
    nodes = state["nodes"]
    return {"name": f"shard{i}", "nodes": nodes, "port": state["port"] + 1 + i * nodes,
            "dir": str(Path(state["dir"]) / f"shard{i}"), "etcd_url": state["etcd_url"],
            "serve_args": state.get("serve_args", []), "pids": {}}


def router_argv(state: dict) -> list[str]:
    return [sys.executable, "-m", "ginkgodb", "router", "--etcd", state["etcd_url"], "--port", str(state["port"]),
            "--bind", "127.0.0.1", "--balancerIntervalSecs", str(state.get("balancer_interval", 10.0))]


def start(shards: int, nodes: int, port: int, directory: str, serve_args: Optional[list[str]] = None,
          balancer_interval: float = 10.0) -> dict:
    if shards < 1 or nodes < 1:
        raise C.ClusterError("--shards and --nodes must be at least 1")
    etcd = C.find_etcd()
    if etcd is None:
        raise C.ClusterError("etcd not found on PATH nor in /usr/bin: install it (Debian: apt-get install etcd-server)")
    root = Path(directory).resolve()
    root.mkdir(parents=True, exist_ok=True)
    if (root / C.STATE_FILE).exists() and any(C._alive(p) for p in C._pids(C.load_state(str(root)))):
        raise C.ClusterError(f"a cluster is already running in {root}: `ginkgodb cluster stop --dir {root}` first")
    previous = C.load_state(str(root)) if (root / C.STATE_FILE).exists() else None
    if previous is not None:   # started before here: etcd keeps its ports (its data names them)
        client_port, peer_port = previous["etcd_ports"]
    else:
        client_port, peer_port = C._free_port(), C._free_port()
    etcd_url = f"http://127.0.0.1:{client_port}"
    state: dict[str, Any] = {
        "sharded": True, "shards": shards, "nodes": nodes, "port": port, "dir": str(root), "etcd_url": etcd_url,
        "etcd_argv": [etcd, "--name", "ginkgodb", "--data-dir", str(root / "etcd"),
                      "--listen-client-urls", etcd_url, "--advertise-client-urls", etcd_url,
                      "--listen-peer-urls", f"http://127.0.0.1:{peer_port}",
                      "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer_port}",
                      "--initial-cluster", f"ginkgodb=http://127.0.0.1:{peer_port}"],
        "etcd_ports": [client_port, peer_port], "serve_args": list(serve_args or []),
        "balancer_interval": balancer_interval, "pids": {}}
    state["pids"]["etcd"] = C._spawn(state["etcd_argv"], root / "etcd.log")
    C._save(state)
    if not C._wait_port(client_port, C.START_TIMEOUT):
        raise C.ClusterError(f"etcd did not start: see {root / 'etcd.log'}")
    subs = [shard_state(state, i) for i in range(shards)]
    for i, sub in enumerate(subs):
        Path(sub["dir"]).mkdir(parents=True, exist_ok=True)
        for n in range(nodes):
            state["pids"][f"shard{i}/{n}"] = C._spawn(C.member_argv(sub, n), Path(sub["dir"]) / f"member{n}.log")
        C._save(state)
    import pymongo
    for i, sub in enumerate(subs):
        for n in range(nodes):
            if not C._wait_port(sub["port"] + n, C.START_TIMEOUT):
                raise C.ClusterError(f"shard {i} member {n} did not start: see {sub['dir']}/member{n}.log")
        first: pymongo.MongoClient = pymongo.MongoClient(f"127.0.0.1:{sub['port']}", directConnection=True)
        try:
            if "setName" not in first.admin.command("hello"):
                first.admin.command("replSetInitiate", {"_id": sub["name"], "members": [
                    {"_id": n, "host": f"127.0.0.1:{sub['port'] + n}"} for n in range(nodes)]})
        finally:
            first.close()
    for sub in subs:
        C.wait_for_primary(sub, C.START_TIMEOUT)
    state["pids"]["router"] = C._spawn(router_argv(state), root / "router.log")
    C._save(state)
    if not C._wait_port(port, C.START_TIMEOUT):
        raise C.ClusterError(f"the router did not start: see {root / 'router.log'}")
    router: pymongo.MongoClient = pymongo.MongoClient(f"127.0.0.1:{port}", serverSelectionTimeoutMS=10000)
    try:
        for sub in subs:
            hosts = ",".join(f"127.0.0.1:{sub['port'] + n}" for n in range(nodes))
            deadline = time.monotonic() + C.START_TIMEOUT
            while True:
                try:
                    router.admin.command("addShard", f"{sub['name']}/{hosts}", name=sub["name"])
                    break
                except pymongo.errors.OperationFailure:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.3)
    finally:
        router.close()
    return state


def connection_string(state: dict) -> str:
    return f"mongodb://127.0.0.1:{state['port']}/"


def status(state: dict) -> list[dict]:
    rows = []
    pid = state["pids"].get("router")
    up = bool(pid) and C._alive(int(pid)) and C._hello(state["port"]) is not None
    rows.append({"member": "router", "host": f"127.0.0.1:{state['port']}", "pid": pid,
                 "state": "ROUTER" if up else "down"})
    for i in range(state["shards"]):
        sub = shard_state(state, i)
        for n in range(state["nodes"]):
            pid = state["pids"].get(f"shard{i}/{n}")
            hello = C._hello(sub["port"] + n) if pid and C._alive(int(pid)) else None
            role = ("down" if hello is None else "PRIMARY" if hello.get("isWritablePrimary")
                    else "SECONDARY" if hello.get("secondary") else "OTHER")
            rows.append({"member": f"shard{i}/{n}", "host": f"127.0.0.1:{sub['port'] + n}", "pid": pid, "state": role})
    return rows


def register(sub: Any) -> None:
    """`ginkgodb cluster` (cluster.py's subcommands), with `start --shards` and a sharded
    cluster's `status` answered here."""
    C.register(sub)
    sub.choices["cluster"].set_defaults(tool_main=main)


def main(args: argparse.Namespace) -> int:
    try:
        if args.cluster_command == "start" and args.shards:
            print(connection_string(start(args.shards, args.nodes, args.port, args.dir)))
            return 0
        if args.cluster_command == "status":
            state = C.load_state(args.dir)
            if state.get("sharded"):
                for row in status(state):
                    print(f"member {row['member']}  {row['host']}  {row['state']}  pid {row['pid']}")
                return 0
        if args.cluster_command == "restart-member" and C.load_state(args.dir).get("sharded"):
            raise C.ClusterError("restart-member is for replica sets; a sharded cluster restarts with stop and start")
    except (C.ClusterError, json.JSONDecodeError) as exc:
        print(f"ginkgodb cluster: {exc}", file=sys.stderr)
        return 2
    return C.main(args)
