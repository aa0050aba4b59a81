"""A small sharded cluster on loopback for the e2e tests: etcd, two single-server shards and a
router whose balancer wakes every 0.5 s (stopped until a test starts it), both shards added."""
from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymongo

from ginkgodb import cluster

from .etcd import ensure_etcd


def spawn(argv: list[str], log: Path) -> subprocess.Popen:
    out = open(log, "ab")
    return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


@contextlib.contextmanager
def small_sharded_cluster(root: Path, orphan_cleanup_delay: float) -> Iterator[dict[str, Any]]:
    """The cluster in `root`: yields the router's client, the shards' direct clients, the ports,
    etcd's URL, the processes and the argv that started the shards and the router (tests kill
    and restart them); everything is stopped at the end."""
    etcd = ensure_etcd()
    client_port, peer_port = cluster._free_port(), cluster._free_port()
    url = f"http://127.0.0.1:{client_port}"
    procs = [spawn([etcd, "--name", "t", "--data-dir", str(root / "etcd"), "--listen-client-urls", url,
                    "--advertise-client-urls", url, "--listen-peer-urls", f"http://127.0.0.1:{peer_port}",
                    "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer_port}",
                    "--initial-cluster", f"t=http://127.0.0.1:{peer_port}"], root / "etcd.log")]
    ports = [cluster._free_port() for _ in range(3)]
    try:
        shard_argv = [[sys.executable, "-m", "ginkgodb", "serve", "--port", str(ports[i]), "--dbpath",
                       str(root / f"s{i}"), "--oplogSize", "64", "--quiet"] for i in range(2)]
        for i in range(2):
            procs.append(spawn(shard_argv[i], root / f"s{i}.log"))
        assert cluster._wait_port(client_port, 30), "etcd did not start"
        router_argv = [sys.executable, "-m", "ginkgodb", "router", "--etcd", url, "--port", str(ports[2]),
                       "--balancerIntervalSecs", "0.5", "--orphanCleanupDelaySecs", str(orphan_cleanup_delay)]
        procs.append(spawn(router_argv, root / "router.log"))
        for p in ports:
            assert cluster._wait_port(p, 30), f"port {p} did not open: see {root}"
        client = pymongo.MongoClient(f"127.0.0.1:{ports[2]}", serverSelectionTimeoutMS=10000)
        client.admin.command("balancerStop")
        for p in ports[:2]:
            client.admin.command("addShard", f"127.0.0.1:{p}")
        yield {"client": client, "ports": ports, "etcd": url, "procs": procs, "router_argv": router_argv,
               "shard_argv": shard_argv, "root": root,
               "shards": [pymongo.MongoClient(f"127.0.0.1:{p}", directConnection=True) for p in ports[:2]]}
        client.close()
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
