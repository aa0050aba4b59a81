"""Replication on a 3-member set on loopback (`ginkgodb cluster start`; needs etcd on PATH):

    PYTHONPATH=<checkout> python -m bench.replication [--samples 300] [--failovers 3]

- insert rates of one client with `w: 1` and with `w: "majority"`;
- replication lag: from an insert's acknowledgement (w: 1) on the primary to the document being
  readable on a secondary, under a background insert load (another client), p50/p99;
- failover time: kill -9 of the primary to a member answering hello as primary (the killed
  member is restarted between rounds).

Everything runs on one machine: the members share its cores with the clients.
"""
from __future__ import annotations

import argparse
import os
import signal
import statistics
import tempfile
import threading
import time

import pymongo
from pymongo.write_concern import WriteConcern

from ginkgodb import cluster


def _rate(coll, n: int) -> float:
    started = time.perf_counter()
    for _ in range(n):
        coll.insert_one({"s": "x" * 100})
    return n / (time.perf_counter() - started)


def _percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=300)
    parser.add_argument("--inserts", type=int, default=1000)
    parser.add_argument("--failovers", type=int, default=3)
    parser.add_argument("--port", type=int, default=28500)
    args = parser.parse_args()
    state = cluster.start("rs0", 3, args.port, tempfile.mkdtemp(prefix="bench-rs-"))
    try:
        uri = cluster.connection_string(state)
        client = pymongo.MongoClient(uri)
        db = client.bench
        w1 = _rate(db.get_collection("w1", write_concern=WriteConcern(w=1)), args.inserts)
        wm = _rate(db.get_collection("wm", write_concern=WriteConcern("majority")), args.inserts)
        print(f"insert_one, one client: w:1 {w1:.0f}/s, w:majority {wm:.0f}/s ({wm / w1:.2f}x)")

        primary = cluster.wait_for_primary(state, 10)
        secondary = next(n for n in range(3) if n != primary)
        reader = pymongo.MongoClient(f"127.0.0.1:{state['port'] + secondary}", directConnection=True,
                                     readPreference="secondaryPreferred").bench.lag
        stop = threading.Event()

        def load() -> None:
            other = pymongo.MongoClient(uri).bench.get_collection("load", write_concern=WriteConcern(w=1))
            while not stop.is_set():
                other.insert_one({"s": "y" * 100})
        background = threading.Thread(target=load, daemon=True)
        background.start()
        lags = []
        coll = db.get_collection("lag", write_concern=WriteConcern(w=1))
        for i in range(args.samples):
            coll.insert_one({"_id": i})
            acked = time.perf_counter()
            while reader.find_one({"_id": i}) is None:
                pass
            lags.append((time.perf_counter() - acked) * 1000)
        stop.set()
        background.join()
        print(f"replication lag under load ({args.samples} samples): p50 {statistics.median(lags):.1f} ms, "
              f"p99 {_percentile(lags, 99):.1f} ms, max {max(lags):.1f} ms")

        times = []
        for _ in range(args.failovers):
            old = cluster.wait_for_primary(state, 20)
            os.kill(int(state["pids"][str(old)]), signal.SIGKILL)
            killed = time.monotonic()
            while True:
                if any((cluster._hello(state["port"] + n, 200) or {}).get("isWritablePrimary")
                       for n in range(3) if n != old):
                    break
                time.sleep(0.02)
            times.append(time.monotonic() - killed)
            cluster.restart_member(state["dir"], old)
            state = cluster.load_state(state["dir"])
            time.sleep(2)
        print("failover after kill -9 of the primary: " + ", ".join(f"{t:.2f} s" for t in times))
    finally:
        cluster.stop(state["dir"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
