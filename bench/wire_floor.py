"""Wire floor: pymongo round trips per second against the smallest possible server (answers the
handshake and `ping`, and `find`/`insert` with canned replies) versus `ginkgodb serve`, for
`ping`, `find_one` by `_id` and `insert_one`, each as a ratio of the floor's ping rate. The
canned find_one and insert_one rows are pymongo's own cost of those calls (no server could
answer them faster on one connection); "server µs" is what ginkgodb adds to each.

Run: python bench/wire_floor.py [--seconds 3] [--in-memory]
Both servers run as separate processes on loopback; one pymongo connection, one thread.
"""
from __future__ import annotations

import argparse
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pymongo  # noqa: E402

from ginkgodb.server.testing import running_server  # noqa: E402


def rate(op: Callable[[], object], seconds: float) -> float:
    """Operations per second of `op` over about `seconds` (after a short warm-up)."""
    for _ in range(200):
        op()
    done, start = 0, time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(100):
            op()
        done += 100
        now = time.perf_counter()
        if now >= deadline:
            return done / (now - start)


def connect(port: int) -> pymongo.MongoClient:
    client = pymongo.MongoClient("127.0.0.1", port, maxPoolSize=1, directConnection=True,
                                 serverSelectionTimeoutMS=10_000)
    client.admin.command("ping")
    return client


def floor_rates(seconds: float) -> dict[str, float]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "bench.ping_server", "--port", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        client = connect(port)
        try:
            coll = client.bench.wire_floor
            counter = iter(range(10**9))
            return {
                "ping": rate(lambda: client.admin.command("ping"), seconds),
                "find_one by _id": rate(lambda: coll.find_one({"_id": next(counter) & 4095}), seconds),
                "insert_one": rate(lambda: coll.insert_one({"name": "x", "n": 1}), seconds),
            }
        finally:
            client.close()
    finally:
        proc.terminate()
        proc.wait(10)


def ginkgodb_rates(seconds: float, in_memory: bool) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        path = None if in_memory else str(Path(tmp) / "data")
        with running_server(path, subprocess=True, quiet=True) as (_, port):
            client = connect(port)
            try:
                coll = client.bench.wire_floor
                coll.insert_many([{"_id": i, "name": f"doc{i}", "n": i} for i in range(10_000)])
                ids = [random.randrange(10_000) for _ in range(4096)]
                counter = iter(range(10**9))
                return {
                    "ping": rate(lambda: client.admin.command("ping"), seconds),
                    "find_one by _id": rate(lambda: coll.find_one({"_id": ids[next(counter) & 4095]}), seconds),
                    "insert_one": rate(lambda: coll.insert_one({"name": "x", "n": 1}), seconds),
                }
            finally:
                client.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="measuring time per operation")
    parser.add_argument("--in-memory", action="store_true", help="ginkgodb without a data directory")
    args = parser.parse_args()
    floors = floor_rates(args.seconds)
    rates = ginkgodb_rates(args.seconds, args.in_memory)
    floor = floors["ping"]
    storage = "in memory" if args.in_memory else "LMDB data directory"
    print(f"pymongo {pymongo.version}, one connection, {storage}")
    print(f"{'operation':<34}{'ops/s':>10}{'µs/op':>10}{'vs floor':>10}{'server µs':>11}")
    print(f"{'floor: minimal ping server':<34}{floor:>10,.0f}{1e6 / floor:>10.0f}{1.0:>10.2f}{'':>11}")
    for name in ("find_one by _id", "insert_one"):
        value = floors[name]
        print(f"{'floor: canned ' + name:<34}{value:>10,.0f}{1e6 / value:>10.0f}{value / floor:>10.2f}{'':>11}")
    for name, value in rates.items():
        extra = 1e6 / value - 1e6 / floors[name]
        print(f"{'ginkgodb ' + name:<34}{value:>10,.0f}{1e6 / value:>10.0f}{value / floor:>10.2f}{extra:>11.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
