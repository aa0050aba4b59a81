"""`ginkgodb serve --workers N`: aggregate find_one-by-_id throughput over the wire from several
client processes, with 1 and 2 server processes (docs/design/workers.md).

    PYTHONPATH=<checkout> python -m bench.workers [--repeat 3] [--clients 4] [--seconds 5]

Each round starts a server (`serve --workers W` on a fresh data directory of 10,000 documents
of about 0.2 KB), then `--clients` spawned processes, each with its own pymongo client (one
connection), wait at a barrier and run `find_one({"_id": random})` for `--seconds`. The rate is
all clients' operations over the window. Rounds alternate W = 1 and W = 2 (interleaved, so
that load from elsewhere on the machine falls on both alike); medians of `--repeat` pairs.
The load average is printed before and after, because the figures depend on it.
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import statistics
import tempfile
import time

from ginkgodb.server.testing import running_server

SPAWN = multiprocessing.get_context("spawn")
DOCUMENTS = 10_000


def _client(port: int, seconds: float, barrier, results, seed: int) -> None:
    import pymongo
    client = pymongo.MongoClient("127.0.0.1", port, maxPoolSize=1)
    coll = client.bench.items
    rng = random.Random(seed)
    for _ in range(200):   # warm: the connection, the catalog, the plan
        coll.find_one({"_id": rng.randrange(DOCUMENTS)})
    barrier.wait()
    done = 0
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for _ in range(50):
            coll.find_one({"_id": rng.randrange(DOCUMENTS)})
        done += 50
    results.put(done)
    client.close()


def one_round(workers: int, clients: int, seconds: float) -> float:
    """Aggregate find_one/s of `clients` processes against a server of `workers` processes."""
    import pymongo
    path = tempfile.mkdtemp(prefix="bench-workers-")
    with running_server(path, subprocess=True, workers=workers, quiet=True) as (host, port):
        seed = pymongo.MongoClient(host, port)
        seed.bench.items.insert_many([{"_id": i, "k": i, "s": "x" * 200} for i in range(DOCUMENTS)])
        seed.close()
        barrier = SPAWN.Barrier(clients)
        results = SPAWN.Queue()
        procs = [SPAWN.Process(target=_client, args=(port, seconds, barrier, results, me)) for me in range(clients)]
        for p in procs:
            p.start()
        total = sum(results.get(timeout=600) for _ in procs)
        for p in procs:
            p.join()
    return total / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}  load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    rates: dict[int, list[float]] = {1: [], 2: []}
    for r in range(args.repeat):
        for workers in (1, 2) if r % 2 == 0 else (2, 1):
            rate = one_round(workers, args.clients, args.seconds)
            rates[workers].append(rate)
            print(f"round {r + 1}: --workers {workers}: {rate:,.0f} find_one/s "
                  f"(load {os.getloadavg()[0]:.2f})", flush=True)
    one, two = statistics.median(rates[1]), statistics.median(rates[2])
    print(f"median --workers 1: {one:,.0f}/s  --workers 2: {two:,.0f}/s  ratio {two / one:.2f}x")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
