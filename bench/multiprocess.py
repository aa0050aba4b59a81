"""Several processes on one data directory: insert_one and find_one throughput of the embedded
client with 1, 2 and 4 processes (docs/design/multiprocess.md).

    PYTHONPATH=<checkout> python -m bench.multiprocess [--repeat 3] [--inserts 1500] [--finds 4000]

Each round makes a new directory with 2,000 documents of about 0.2 KB, then starts P spawned
processes that open it with `MongoClient(path)`, wait at a barrier, and run their operations:
`insert_one` of new documents, then `find_one` by `_id` of random existing ones. A process
reports its own elapsed time; the aggregate rate is all processes' operations over the slowest
one's time. Medians of `--repeat` rounds.
"""
from __future__ import annotations

import argparse
import multiprocessing
import random
import statistics
import sys
import tempfile
import time

SPAWN = multiprocessing.get_context("spawn")
PRELOAD = 2000


def _worker(me: int, path: str, inserts: int, finds: int, barrier, results) -> None:
    from ginkgodb import MongoClient
    client = MongoClient(path)
    coll = client.bench.items
    rng = random.Random(me)
    coll.find_one({"_id": 0})   # warm: the catalog and the first snapshot
    barrier.wait()
    start = time.perf_counter()
    for i in range(inserts):
        coll.insert_one({"_id": f"{me}-{i}", "k": i, "s": "y" * 200})
    insert_s = time.perf_counter() - start
    barrier.wait()
    start = time.perf_counter()
    for _ in range(finds):
        coll.find_one({"_id": rng.randrange(PRELOAD)})
    find_s = time.perf_counter() - start
    results.put((insert_s, find_s))
    client.close()


def one_round(processes: int, inserts: int, finds: int) -> tuple[float, float]:
    """(aggregate insert_one/s, aggregate find_one/s) with `processes` processes."""
    from ginkgodb import MongoClient
    path = tempfile.mkdtemp(prefix="multiproc-")
    client = MongoClient(path)
    client.bench.items.insert_many([{"_id": i, "k": i, "s": "x" * 200} for i in range(PRELOAD)])
    client.close()
    barrier = SPAWN.Barrier(processes)
    results = SPAWN.Queue()
    procs = [SPAWN.Process(target=_worker, args=(me, path, inserts, finds, barrier, results))
             for me in range(processes)]
    for p in procs:
        p.start()
    timings = [results.get(timeout=600) for _ in procs]
    for p in procs:
        p.join()
    check = MongoClient(path)
    try:
        assert check.bench.items.count_documents({}) == PRELOAD + processes * inserts
    finally:
        check.close()
    insert_rate = processes * inserts / max(t[0] for t in timings)
    find_rate = processes * finds / max(t[1] for t in timings)
    return insert_rate, find_rate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--inserts", type=int, default=1500)
    parser.add_argument("--finds", type=int, default=4000)
    parser.add_argument("--processes", default="1,2,4")
    args = parser.parse_args(argv)
    counts = [int(p) for p in args.processes.split(",")]
    print("| processes | insert_one/s (all processes) | find_one/s (all processes) |")
    print("|---|---|---|")
    for n in counts:
        rounds = [one_round(n, args.inserts, args.finds) for _ in range(args.repeat)]
        ins = statistics.median(r[0] for r in rounds)
        fin = statistics.median(r[1] for r in rounds)
        print(f"| {n} | {ins:,.0f} | {fin:,.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
