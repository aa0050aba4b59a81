"""What one `$near` query (limit 10, 100,000 points) costs, in machine instructions, on both
embedded engines, counted by valgrind's cachegrind.

    PYTHONPATH=<checkout> python -m bench.geo_near_cost [--engines lmdb,memory] [--ops 50,250]

The data set and the centers are bench/geo_queries.py's (its indexed collection). Each figure
is the difference between two runs of the same queries, `--ops A,B` of them after the same
warm-up, divided by B - A: start-up, loading and warm-up cancel out. The data is built once
without valgrind into a temporary LMDB directory; the memory engine's runs load the same
key/value pairs into its map, so both engines answer over identical entries. The loaded data
is frozen out of the garbage collector (gc.freeze): otherwise a full collection over the
memory engine's 200,000 keys falls into one window or the other and moves a figure by more
than a change does. Needs `valgrind`; a few minutes per engine.
"""
from __future__ import annotations

import argparse
import gc
import os
import pickle
import random
import shutil
import sys
import tempfile
from typing import Any

from .cachegrind import instructions
from .geo_queries import _points


def build(path: str, n: int) -> None:
    """The indexed collection of bench/geo_queries.py at `path` (LMDB), and its key/value pairs
    in `path`/pairs.pickle for the memory engine's runs."""
    import lmdb

    import ginkgodb
    client = ginkgodb.MongoClient(os.path.join(path, "data"))
    coll = client.bench_geo.indexed
    docs = _points(n)
    for i in range(0, n, 5000):
        coll.insert_many(docs[i:i + 5000])
    coll.create_index([("loc", "2dsphere")])
    client.close()
    env = lmdb.open(os.path.join(path, "data"), subdir=True, readonly=True, lock=False)
    with env.begin() as txn:
        pairs = list(txn.cursor())
    env.close()
    with open(os.path.join(path, "pairs.pickle"), "wb") as f:
        pickle.dump(pairs, f)


def child(path: str, engine: str, repeat: int) -> None:
    """One counted run: open the data, warm up, run `repeat` near queries, exit at once."""
    from ginkgodb.storage import lmdb_engine, memory
    # valgrind cannot reserve the default map's address space; the data set needs far less
    lmdb_engine.LmdbEngine.__init__.__kwdefaults__["map_size"] = 1 << 30
    import ginkgodb
    if engine == "memory":
        with open(os.path.join(path, "pairs.pickle"), "rb") as f:
            pairs = pickle.load(f)
        plain_init = memory.MemoryEngine.__init__

        def loaded(self: Any) -> None:
            plain_init(self)
            self._data.update(pairs)
        memory.MemoryEngine.__init__ = loaded   # type: ignore[method-assign]
        client = ginkgodb.MongoClient()
    else:
        client = ginkgodb.MongoClient(os.path.join(path, "data"))
    coll = client.bench_geo.indexed
    gc.collect()
    gc.freeze()
    rng = random.Random(5)
    centers = [[rng.uniform(-9.5, 9.5), rng.uniform(-9.5, 9.5)] for _ in range(50)]

    def near(center: list) -> list:
        query = {"loc": {"$near": {"$geometry": {"type": "Point", "coordinates": center}}}}
        return [d["_id"] for d in coll.find(query, {"_id": 1}).limit(10)]
    for center in centers * 2:
        near(center)
    for i in range(repeat):
        near(centers[i % 50])
    os._exit(0)   # no close: the counted runs write nothing back


def count(path: str, engine: str, repeat: int) -> int:
    """Instructions of one child run under cachegrind."""
    return instructions("bench.geo_near_cost", ["--child", path, "--engines", engine, "--repeat", str(repeat)])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.geo_near_cost", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--points", type=int, default=100_000)
    p.add_argument("--engines", default="lmdb,memory")
    p.add_argument("--ops", default="50,250", help="A,B: queries in the two counted runs")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    p.add_argument("--repeat", type=int, default=0, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child is not None:
        child(args.child, args.engines, args.repeat)
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 2
    low, high = (int(x) for x in args.ops.split(","))
    path = tempfile.mkdtemp(prefix="geo-near-cost-")
    try:
        build(path, args.points)
        print(f"$near limit 10 on {args.points:,} points, instructions per query (valgrind cachegrind)")
        for engine in (e.strip() for e in args.engines.split(",") if e.strip()):
            per_query = (count(path, engine, high) - count(path, engine, low)) / (high - low)
            print(f"{engine}: {per_query:,.0f}")
    finally:
        shutil.rmtree(path, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
