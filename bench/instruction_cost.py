"""What the workload statistics cost per operation, in machine instructions: W4 and W5 with them
on and off, each run counted by valgrind's cachegrind.

    PYTHONPATH=<checkout> python -m bench.instruction_cost [--n 100000] [--ops 100,1100] [--write]

Process CPU time moves with the machine's load (other processes share the caches and the
cores), and interpreted opcodes (bench/query_stats_cost.py) miss what C code costs: the tuples,
hashes and sums of the statistics path are mostly C. The instructions a process executes do
not depend on the load. Each figure is the difference between two runs of one operation, with
`--ops A,B` repetitions after the same warm-up, divided by B - A: start-up, imports and warm-up
cancel out. The data set is the benchmark's (`bench/documents.py`, with its indexes), built
once without valgrind in a temporary directory that every run opens (LMDB). Needs `valgrind`
(Debian's package); about a minute per run under valgrind.
"""
from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Any

from .query_stats_cost import RESULTS, report

OPERATIONS = ("W4", "W5")
_IREFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def build(path: str, n: int) -> None:
    """The benchmark's data set of n documents with its indexes, at `path`."""
    import ginkgodb

    from .documents import Dataset
    ds = Dataset(n)
    client = ginkgodb.MongoClient(path)
    coll = client.db.c
    for batch in ds.batches(1000):
        coll.insert_many(batch)
    coll.create_index("k")
    coll.create_index("sku", unique=True)
    client.close()


def child(path: str, n: int, op: str, stats_on: bool, repeat: int) -> None:
    """One counted run: open the data set, warm up, run `op` `repeat` times, exit at once."""
    from ginkgodb.storage import lmdb_engine
    # valgrind cannot reserve the default map's address space; the data set needs far less
    lmdb_engine.LmdbEngine.__init__.__kwdefaults__["map_size"] = 1 << 30
    import ginkgodb

    from .documents import Dataset
    client = ginkgodb.MongoClient(path, queryStats=stats_on)
    coll = client.db.c
    ds = Dataset(n)
    rng = random.Random(4)
    ids = [ds.object_id(rng.randrange(n)) for _ in range(4096)]
    ks = [rng.randrange(ds.k_values) for _ in range(4096)]
    if op == "W4":
        def run(i: int) -> Any:
            return coll.find_one({"_id": ids[i % 4096]})
    else:
        def run(i: int) -> Any:
            return list(coll.find({"k": ks[i % 4096]}))
    for i in range(100):
        run(i)
    for i in range(repeat):
        run(i)
    os._exit(0)   # no close: the counted runs write nothing back to the shared data set


def count(path: str, n: int, op: str, stats_on: bool, repeat: int) -> int:
    """Instructions of one child run under cachegrind."""
    cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
           sys.executable, "-m", "bench.instruction_cost", "--child", path, "--n", str(n),
           "--op", op, "--stats", "on" if stats_on else "off", "--repeat", str(repeat)]
    env = {**os.environ, "PYTHONHASHSEED": "0"}   # the same hashes, so the same work, every run
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    found = _IREFS.search(out.stderr)
    if out.returncode != 0 or found is None:
        raise RuntimeError(f"valgrind run failed: {out.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def measure(n: int, low: int, high: int) -> dict[str, dict[str, float]]:
    """Instructions per operation, on and off, per workload."""
    scratch = tempfile.mkdtemp(prefix="instruction-cost-")
    try:
        path = os.path.join(scratch, "data")
        build(path, n)
        out: dict[str, dict[str, float]] = {}
        for op in OPERATIONS:
            row = {}
            for stats_on in (True, False):
                runs = [count(path, n, op, stats_on, r) for r in (low, high)]
                row["on" if stats_on else "off"] = (runs[1] - runs[0]) / (high - low)
            out[op] = row
        return out
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def table(results: dict[str, dict[str, float]], n: int) -> str:
    lines = [f"n = {n:,} (the benchmark's data set), instructions per operation (valgrind cachegrind)", "",
             "| operation | statistics on | statistics off | added |", "| --- | --- | --- | --- |"]
    for op, r in results.items():
        lines.append(f"| {op} | {r['on']:,.0f} | {r['off']:,.0f} | {r['on'] / r['off'] - 1:+.2%} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--ops", default="100,1100", help="the two repetition counts A,B")
    p.add_argument("--write", action="store_true", help=f"append the table to {RESULTS}")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--op", choices=OPERATIONS, help=argparse.SUPPRESS)
    p.add_argument("--stats", choices=("on", "off"), help=argparse.SUPPRESS)
    p.add_argument("--repeat", type=int, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        child(args.child, args.n, args.op, args.stats == "on", args.repeat)
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 2
    low, high = (int(x) for x in args.ops.split(","))
    report(table(measure(args.n, low, high), args.n), args.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
