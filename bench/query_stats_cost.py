"""What the workload statistics cost per operation: the same operations with them on and off.

    PYTHONPATH=<checkout> python -m bench.query_stats_cost [--rounds 15] [--n 100000] [--write]

One embedded LMDB client. With `--n N`: the benchmark's data set of N documents with its indexes,
and W4 (find_one by `_id`) and W5 (indexed equality, about 10 documents) as `python -m bench`
runs them; without: 2,000 documents of about 0.2 KB with an index on `k` (as bench/micro_ops.py)
and the same two operations (W5 returning 20 documents there). Each operation runs in rounds
that alternate "on" (the defaults:
`$queryStats` shapes, `top`, query analyzers) and "off" (`MongoClient(queryStats=False)`'s
switch) in one process (on, off, off, on, ...: neither side always first), timed in process
CPU time so that other processes' load does not count; the medians are compared. The interpreted-opcode count per operation (sys.settrace with
f_trace_opcodes) is the deterministic figure: it does not move with the machine. `$indexStats`
access counting stays on in both columns (mongod always counts). `--write` appends the table to
bench/results/query-stats-cost.md.
"""
from __future__ import annotations

import argparse
import collections
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from .op_costs import opcodes

RESULTS = "bench/results/query-stats-cost.md"


def _small_collection(client: Any) -> dict[str, tuple[Callable[[int], Any], int]]:
    """2,000 documents of about 0.2 KB with an index on `k` (bench/micro_ops.py's)."""
    coll = client.db.c
    coll.insert_many([{"_id": i, "k": i % 100, "s": "x" * 200} for i in range(2000)])
    coll.create_index("k")
    return {"W4 find_one by _id": (lambda i: coll.find_one({"_id": i % 2000}), 1000),
            "W5 indexed find (20 docs)": (lambda i: list(coll.find({"k": i % 100})), 100)}


def _benchmark_collection(client: Any, n: int) -> dict[str, tuple[Callable[[int], Any], int]]:
    """The benchmark's data set of `n` documents with its `k` and unique `sku` indexes, and W4 and
    W5 exactly as bench/workloads/point_reads.py runs them (random picks from a fixed seed)."""
    import random

    from .documents import Dataset
    ds = Dataset(n)
    coll = client.db.c
    for batch in ds.batches(1000):
        coll.insert_many(batch)
    coll.create_index("k")
    coll.create_index("sku", unique=True)
    rng = random.Random(4)
    ids = [ds.object_id(rng.randrange(n)) for _ in range(4096)]
    ks = [rng.randrange(ds.k_values) for _ in range(4096)]
    return {"W4 find_one by _id": (lambda i: coll.find_one({"_id": ids[i % 4096]}), 1000),
            "W5 indexed equality (~10 docs)": (lambda i: list(coll.find({"k": ks[i % 4096]})), 300)}


def measure(rounds: int, n: int = 0) -> dict[str, dict[str, float]]:
    """`n` > 0: on the benchmark's data set of n documents; 0: on the small collection."""
    import ginkgodb
    client = ginkgodb.MongoClient(tempfile.mkdtemp(prefix="qstats-cost-"))
    stats = client._engine.query_stats
    ops = _benchmark_collection(client, n) if n else _small_collection(client)
    out: dict[str, dict[str, float]] = {}
    for name, (op, n) in ops.items():
        for i in range(50):
            op(i)   # warm: shapes, plan and filter caches
        row: dict[str, float] = {}
        for state in (True, False):
            stats.enabled = state
            row["opcodes_on" if state else "opcodes_off"] = opcodes(op, 50, collections.Counter())
        on: list[float] = []
        off: list[float] = []
        for r in range(rounds * 2):
            stats.enabled = (r % 2 == 0) != (r // 2 % 2 == 1)   # on, off, off, on, ...: no side always first
            started = time.process_time()
            for i in range(n):
                op(i)
            (on if stats.enabled else off).append(n / (time.process_time() - started))
        stats.enabled = True
        row["on"], row["off"] = statistics.median(on), statistics.median(off)
        out[name] = row
    client.close()
    return out


def table(results: dict[str, dict[str, float]]) -> str:
    lines = ["| operation | opcodes on | opcodes off | opcodes added | ops/s on | ops/s off | time added |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, r in results.items():
        lines.append(f"| {name} | {r['opcodes_on']:,.0f} | {r['opcodes_off']:,.0f} | "
                     f"{r['opcodes_on'] / r['opcodes_off'] - 1:+.1%} | {r['on']:,.0f} | {r['off']:,.0f} | "
                     f"{r['off'] / r['on'] - 1:+.1%} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--n", type=int, default=0,
                   help="run W4 and W5 on the benchmark's data set of N documents (the issue's n is "
                        "100,000); 0: the small collection")
    p.add_argument("--write", action="store_true", help=f"append the table to {RESULTS}")
    args = p.parse_args(argv)
    results = measure(args.rounds, args.n)
    report((f"n = {args.n:,} (the benchmark's data set)\n\n" if args.n else "") + table(results), args.write)
    return 0


def report(text: str, write: bool) -> None:
    """Print a table, and with `write` append it to RESULTS (bench/instruction_cost.py's too)."""
    print(text)
    if write:
        with open(RESULTS, "a", encoding="utf-8") as f:
            f.write("\n" + text + "\n")


if __name__ == "__main__":
    sys.exit(main())
