"""Read scaling on a 3-member set on loopback (`ginkgodb cluster start`; needs etcd on PATH):

    PYTHONPATH=<checkout> python -m bench.read_scaling [--processes 4] [--seconds 5]

Several client processes read documents by `_id` (find_one of a random one of 1,000) for a fixed
time, with the read preference `primary` (one member serves every read), `secondaryPreferred`
(the two secondaries) and `nearest` (all three; `localThresholdMS` wide enough that pymongo
spreads reads over every member). The figure is the reads per second of all processes together.
Everything runs on one machine: members and clients share its cores, so the gain is bounded by
the cores, not by the members.
"""
from __future__ import annotations

import argparse
import multiprocessing
import random
import tempfile
import time

import pymongo

from ginkgodb import cluster

DOCUMENTS = 1000


def _reader(uri: str, mode: str, seconds: float, out: multiprocessing.Queue) -> None:
    client: pymongo.MongoClient = pymongo.MongoClient(uri, readPreference=mode, localThresholdMS=1000)
    coll = client.bench.reads
    coll.find_one({"_id": 0})      # connected before the clock starts
    n = 0
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        coll.find_one({"_id": random.randrange(DOCUMENTS)})
        n += 1
    client.close()
    out.put(n)


def measure(uri: str, mode: str, processes: int, seconds: float) -> float:
    queue: multiprocessing.Queue = multiprocessing.Queue()
    workers = [multiprocessing.Process(target=_reader, args=(uri, mode, seconds, queue)) for _ in range(processes)]
    for w in workers:
        w.start()
    total = sum(queue.get(timeout=seconds + 60) for _ in workers)
    for w in workers:
        w.join()
    return total / seconds


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--port", type=int, default=28600)
    args = parser.parse_args()
    state = cluster.start("rs0", 3, args.port, tempfile.mkdtemp(prefix="bench-reads-"))
    try:
        uri = cluster.connection_string(state)
        client: pymongo.MongoClient = pymongo.MongoClient(uri)
        client.bench.reads.insert_many([{"_id": i, "s": "x" * 200} for i in range(DOCUMENTS)])
        client.close()
        rates = {mode: measure(uri, mode, args.processes, args.seconds)
                 for mode in ("primary", "secondaryPreferred", "nearest")}
        base = rates["primary"]
        print(f"find_one by _id, {args.processes} client processes, {args.seconds:.0f} s each, 3 members:")
        for mode, rate in rates.items():
            print(f"  {mode:<20} {rate:8.0f} reads/s  ({rate / base:.2f}x primary)")
    finally:
        cluster.stop(state["dir"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
