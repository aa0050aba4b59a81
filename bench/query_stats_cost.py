"""What the workload statistics cost per operation: the same operations with them on and off.

    PYTHONPATH=<checkout> python -m bench.query_stats_cost [--rounds 15] [--write]

One embedded LMDB client, 2,000 documents of about 0.2 KB with an index on `k` (as
bench/micro_ops.py), and the operations of W4 (find_one by `_id`) and W5 (an indexed equality
find, here 20 documents). Each operation runs in rounds that alternate "on" (the defaults:
`$queryStats` shapes, `top`, query analyzers) and "off" (`MongoClient(queryStats=False)`'s
switch) in one process, timed in process CPU time so that other processes' load does not count;
the medians are compared. The interpreted-opcode count per operation (sys.settrace with
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


def measure(rounds: int) -> dict[str, dict[str, float]]:
    import ginkgodb
    client = ginkgodb.MongoClient(tempfile.mkdtemp(prefix="qstats-cost-"))
    coll = client.db.c
    coll.insert_many([{"_id": i, "k": i % 100, "s": "x" * 200} for i in range(2000)])
    coll.create_index("k")
    stats = client._engine.query_stats
    ops: dict[str, tuple[Callable[[int], Any], int]] = {
        "W4 find_one by _id": (lambda i: coll.find_one({"_id": i % 2000}), 1000),
        "W5 indexed find (20 docs)": (lambda i: list(coll.find({"k": i % 100})), 100),
    }
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
            stats.enabled = r % 2 == 0
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
    p.add_argument("--write", action="store_true", help=f"append the table to {RESULTS}")
    args = p.parse_args(argv)
    text = table(measure(args.rounds))
    print(text)
    if args.write:
        with open(RESULTS, "a", encoding="utf-8") as f:
            f.write("\n" + text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
