"""Other clients' latency while one client runs slow requests (issue: no request stalls others).

    python -m bench.slow_query_latency [--seconds 10] [--source DIR]

Starts `ginkgodb serve` (in memory, its own process) with 100,000 documents, then measures the
latency of simple operations (`ping`, `find_one` by `_id`) on one connection, first alone and
then while other connections run slow requests in a loop: a catastrophic-backtracking `$regex`
with `maxTimeMS`, a `$range` that builds a large array, an unindexed `$group` + `$sort` over
every document, and a large `$in` on `_id`. Reported per phase: p50, p99 and max in
milliseconds, and how many slow requests ran. `--source` runs the server from another checkout
(an older commit, to measure before and after a change).
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import pymongo
from pymongo.errors import PyMongoError

N_DOCS = 100_000


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _start(source: str) -> tuple[subprocess.Popen, int]:
    port = _free_port()
    env = dict(os.environ, PYTHONPATH=source)
    code = "import sys; from ginkgodb.cli import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.Popen([sys.executable, "-c", code, "serve", "--in-memory", "--port", str(port), "--quiet"],
                            env=env, cwd=source, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc, port
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("the server did not start")


def _slow_requests(db: Any) -> dict[str, Callable[[], Any]]:
    return {
        "regex": lambda: list(db.s.find({"s": {"$regex": "(a+)+$"}}, max_time_ms=100)),
        "range": lambda: db.command("aggregate", "c", cursor={}, pipeline=[
            {"$project": {"n": {"$size": {"$range": [0, 2_000_000]}}}}, {"$limit": 1}]),
        "group": lambda: list(db.c.aggregate([{"$group": {"_id": "$k", "n": {"$sum": 1}}}, {"$sort": {"n": -1}}])),
        "in": lambda: list(db.c.find({"_id": {"$in": list(range(0, 200_000, 2))}}, {"_id": 1}).limit(10)),
    }


SLOW_KINDS = ("regex", "range", "group", "in")


def _latencies(client: pymongo.MongoClient, seconds: float) -> list[float]:
    db = client.bench_latency
    out: list[float] = []
    end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < end:
        start = time.perf_counter()
        if i % 2:
            db.command("ping")
        else:
            db.c.find_one({"_id": i % N_DOCS})
        out.append((time.perf_counter() - start) * 1000)
        i += 1
        time.sleep(0.002)
    return out


def _summary(phase: str, ms: list[float], slow_done: int) -> dict[str, Any]:
    return {"phase": phase, "ops": len(ms), "p50_ms": round(statistics.median(ms), 2),
            "p99_ms": round(_percentile(ms, 0.99), 2), "max_ms": round(max(ms), 2), "slow_requests": slow_done}


def measure(source: str, seconds: float, slow_clients: int = 2,
            kinds: tuple[str, ...] = SLOW_KINDS) -> list[dict[str, Any]]:
    proc, port = _start(source)
    try:
        client = pymongo.MongoClient(port=port, serverSelectionTimeoutMS=10_000)
        db = client.bench_latency
        for start in range(0, N_DOCS, 10_000):
            db.c.insert_many([{"_id": i, "k": i % 1000, "s": f"item {i}"} for i in range(start, start + 10_000)])
        db.s.insert_one({"s": "a" * 25 + "b"})
        results = [_summary("alone", _latencies(client, seconds), 0)]
        stop = threading.Event()
        done = [0]

        def hammer(k: int) -> None:
            own = pymongo.MongoClient(port=port, serverSelectionTimeoutMS=10_000)
            by_kind = _slow_requests(own.bench_latency)
            requests = [by_kind[k] for k in kinds]
            j = k
            while not stop.is_set():
                try:
                    requests[j % len(requests)]()
                except PyMongoError:
                    pass  # an answered error (maxTimeMS, a limit) is what the request should get
                done[0] += 1
                j += 1
            own.close()

        threads = [threading.Thread(target=hammer, args=(k,), daemon=True) for k in range(slow_clients)]
        for t in threads:
            t.start()
        time.sleep(0.5)
        results.append(_summary(f"beside {slow_clients} slow clients", _latencies(client, seconds), 0))
        stop.set()
        for t in threads:
            t.join(timeout=60)
        results[-1]["slow_requests"] = done[0]
        client.close()
        return results
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.slow_query_latency", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each phase")
    parser.add_argument("--source", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        help="the checkout whose ginkgodb serves (default: this one)")
    parser.add_argument("--clients", type=int, default=2, help="connections running slow requests")
    parser.add_argument("--slow", default=",".join(SLOW_KINDS),
                        help=f"which slow requests run beside (comma-separated of {', '.join(SLOW_KINDS)})")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    results = measure(args.source, args.seconds, max(1, args.clients),
                      kinds=tuple(k for k in args.slow.split(",") if k))
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(f"{'phase':<28} {'ops':>6} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'slow requests':>14}")
        for r in results:
            print(f"{r['phase']:<28} {r['ops']:>6} {r['p50_ms']:>8} {r['p99_ms']:>8} {r['max_ms']:>8} "
                  f"{r['slow_requests']:>14}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
