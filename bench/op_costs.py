"""Interpreted opcodes and CPU-time rates of bench/micro_ops.py's four operations, for
comparing one checkout against another with a figure machine load does not move.

    PYTHONPATH=<checkout> python -m bench.op_costs      # from this checkout's root

The data set is micro_ops.py's (2,000 documents of about 0.2 KB on LMDB, an index on `k`). Per
operation: the interpreted opcodes per call (sys.settrace with f_trace_opcodes, 50 calls after
20 warm-up calls: deterministic for a given checkout and Python), then the best of three rounds
in process CPU time (time.process_time, so other processes' load counts less than in wall
time; still compare interleaved runs of the two checkouts). `--top N` lists the N functions
with the most opcodes per call.
"""
from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any


def _operations(coll: Any) -> list[tuple[str, Callable[[int], Any], int]]:
    next_id = [100_000]

    def insert(i: int) -> None:
        next_id[0] += 1
        coll.insert_one({"_id": next_id[0], "k": i, "s": "y"})

    return [("find_one", lambda i: coll.find_one({"_id": i % 2000}), 5000),
            ("insert_one", insert, 2000),
            ("update_one", lambda i: coll.update_one({"_id": i % 2000}, {"$inc": {"k": 1}}), 2000),
            ("indexed find", lambda i: list(coll.find({"k": i % 100})), 200)]


def opcodes(fn: Callable[[int], Any], n: int, per_function: collections.Counter) -> float:
    """Interpreted opcodes per call of fn(i), i in range(n); per_function counts by function."""
    total = [0]

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        code = frame.f_code
        where = (code.co_filename, code.co_firstlineno, code.co_name)

        def local(frame: Any, event: str, arg: Any) -> Any:
            if event == "opcode":
                total[0] += 1
                per_function[where] += 1
            return local
        return local

    sys.settrace(tracer)
    try:
        for i in range(n):
            fn(i)
    finally:
        sys.settrace(None)
    return total[0] / n


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--top", type=int, default=0, help="list the N costliest functions per operation")
    args = p.parse_args(argv)
    import ginkgodb
    client = ginkgodb.MongoClient(tempfile.mkdtemp(prefix="op-costs-"))
    coll = client.db.c
    coll.insert_many([{"_id": i, "k": i % 100, "s": "x" * 200} for i in range(2000)])
    coll.create_index("k")
    root = os.path.dirname(os.path.dirname(os.path.abspath(ginkgodb.__file__)))
    for name, op, n in _operations(coll):
        for i in range(20):
            op(i)
        per_function: collections.Counter = collections.Counter()
        count = opcodes(op, 50, per_function)
        best = float("inf")
        for _ in range(3):
            started = time.process_time()
            for i in range(n):
                op(i)
            best = min(best, time.process_time() - started)
        print(f"{name}: {count:,.0f} opcodes/op, {n / best:,.0f}/s (CPU time)")
        for (path, line, func), v in per_function.most_common(args.top):
            shown = os.path.relpath(path, root) if path.startswith(root) else path
            print(f"    {v / 50:8.1f}  {func}  {shown}:{line}")
    client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
