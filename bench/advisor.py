"""How long `ginkgodb advise` takes on a large collection, and what the always-on workload
statistics cost ($queryStats, top and $indexStats counting).

    PYTHONPATH=<checkout> python -m bench.advisor --docs 1000000     # the advisor's timing
    PYTHONPATH=<checkout> python -m bench.advisor --overhead          # statistics on vs off

The timing builds a collection of `--docs` orders (about 0.2 KB each, three secondary indexes,
insert_many in batches of 10,000 on the embedded client, untimed), runs the workload of a small
application on it, then times `advise` with the default sample (1,000 documents) and a
`--shard-key` run of the one collection (analyzeShardKey with sampleSize 100,000). The overhead measurement
alternates rounds with the statistics on and off in one process, timed in process CPU
time (so the load of other processes on a shared machine does not count) (find_one by _id and an
indexed find, as bench/micro_ops.py), 15 rounds each, and reports medians. Results go to
bench/results/advisor.md when `--write` is given.
"""
from __future__ import annotations

import argparse
import datetime
import statistics
import sys
import tempfile
import time
import uuid
from typing import Any

RESULTS = "bench/results/advisor.md"


def build(coll: Any, n: int) -> float:
    base = datetime.datetime(2024, 1, 1)
    started = time.perf_counter()
    batch = 10_000
    statuses = ("new", "paid", "sent", "returned")
    for lo in range(0, n, batch):
        coll.insert_many([{"_id": i, "ref": uuid.UUID(int=i * 2654435761 % 2**128).hex,
                           "customer": i % 50_000, "status": statuses[i % 4],
                           "created": base + datetime.timedelta(seconds=i), "total": (i * 37) % 1000,
                           "note": "x" * 80} for i in range(lo, min(n, lo + batch))], ordered=False)
    coll.create_index("customer")
    coll.create_index("status")
    coll.create_index([("status", 1), ("created", 1)])
    return time.perf_counter() - started


def timing(n: int, sample: int, path: str | None = None) -> dict:
    import ginkgodb
    from ginkgodb.advisor import Options, advise
    reuse = path is not None
    path = path or tempfile.mkdtemp(prefix="advise-")
    client = ginkgodb.MongoClient(path)
    coll = client.shop.orders
    build_s = 0.0 if reuse else build(coll, n)
    n = coll.estimated_document_count()
    for i in range(200):
        coll.find_one({"_id": i})
        list(coll.find({"customer": i}))
    for i in range(20):
        list(coll.find({"ref": f"{i:032x}"}).limit(1))
    started = time.perf_counter()
    report = advise(client, Options(sample=sample), path)
    advise_s = time.perf_counter() - started
    started = time.perf_counter()
    keyed = advise(client, Options(sample=sample, db="shop", collection="orders",
                                   shard_keys=[("shop.orders", {"customer": 1})]), path)
    shard_s = time.perf_counter() - started
    client.close()
    return {"docs": n, "build_s": build_s, "advise_s": advise_s, "shard_key_s": shard_s,
            "findings": sorted({f.rule for f in report.findings} | {f.rule for f in keyed.findings})}


def overhead(rounds: int = 15) -> dict:
    import ginkgodb
    client = ginkgodb.MongoClient(tempfile.mkdtemp(prefix="overhead-"))
    coll = client.db.c
    coll.insert_many([{"_id": i, "k": i % 100, "s": "x" * 200} for i in range(2000)])
    coll.create_index("k")
    stats = _query_stats(client)
    ops = {"find_one by _id": (lambda: [coll.find_one({"_id": i % 2000}) for i in range(1000)], 1000),
           "indexed find (20 docs)": (lambda: [list(coll.find({"k": i % 100})) for i in range(100)], 100)}
    out = {}
    for name, (run, n) in ops.items():
        on, off = [], []
        for r in range(rounds * 2):
            enabled = r % 2 == 0
            stats.enabled = enabled
            started = time.process_time()     # CPU time: other processes' load does not count
            run()
            rate = n / (time.process_time() - started)
            (on if enabled else off).append(rate)
        stats.enabled = True
        out[name] = {"on": statistics.median(on), "off": statistics.median(off)}
    client.close()
    return out


def recording_cost(rounds: int = 21) -> dict:
    """The CPU time of recording one find (shape, $queryStats metrics, top) against the CPU time
    of a find_one by _id, alternated and taken as medians: a figure a loaded machine does not blur."""
    import ginkgodb
    from ginkgodb.commands.context import CommandContext
    from ginkgodb.commands.query_shapes import note_first
    from ginkgodb.engine.query_stats import find_shape
    client = ginkgodb.MongoClient(tempfile.mkdtemp(prefix="overhead-"))
    coll = client.db.c
    coll.insert_many([{"_id": i, "k": i % 100} for i in range(2000)])
    ctx = CommandContext.__new__(CommandContext)
    ctx.engine = ctx.base_engine = client._engine

    class Cursor:       # what note_first reads of a cursor
        ns = "db.c"
        stats = None

    reply = {"cursor": {"firstBatch": [{}], "id": 0}}
    filt = {"_id": 5}
    finds, records = [], []
    for _ in range(rounds):
        started = time.process_time()
        for i in range(2000):
            coll.find_one({"_id": i})
        finds.append((time.process_time() - started) / 2000)
        started = time.process_time()
        for _ in range(2000):
            note_first(ctx, Cursor, reply, lambda: find_shape("db", "c", filt, None, None, 0, 1, None, None),
                       time.perf_counter_ns(), filt)
        records.append((time.process_time() - started) / 2000)
    client.close()
    find_us, record_us = statistics.median(finds) * 1e6, statistics.median(records) * 1e6
    return {"find_us": find_us, "record_us": record_us, "share": record_us / (find_us - record_us)}


def _query_stats(client: Any) -> Any:
    """The engine's statistics switch (the embedded client's engine, for this measurement only)."""
    for attr in ("_engine", "engine"):
        engine = getattr(client, attr, None)
        if engine is not None and hasattr(engine, "query_stats"):
            return engine.query_stats
    raise SystemExit("cannot reach the embedded engine's query statistics")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.advisor")
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--sample", type=int, default=1000)
    parser.add_argument("--overhead", action="store_true")
    parser.add_argument("--dbpath", help="time a data directory an earlier run built (kept, not rebuilt)")
    parser.add_argument("--write", action="store_true", help=f"append the results to {RESULTS}")
    args = parser.parse_args(argv)
    lines = []
    if args.overhead:
        res = overhead()
        lines.append("| operation | statistics on (ops/s) | off (ops/s) | cost |\n|---|---|---|---|")
        for name, r in res.items():
            lines.append(f"| {name} | {r['on']:,.0f} | {r['off']:,.0f} | {100 * (1 - r['on'] / r['off']):+.1f}% |")
        cost = recording_cost()
        lines.append(f"\nrecording one find: {cost['record_us']:.2f} us CPU against {cost['find_us']:.1f} us for a "
                     f"find_one by _id ({100 * cost['share']:.1f}%)")
    else:
        res = timing(args.docs, args.sample, args.dbpath)
        lines.append(f"| documents | build (untimed) | advise | advise --shard-key shop.orders:customer |\n|---|---|---|---|\n"
                     f"| {res['docs']:,} | {res['build_s']:.1f} s | {res['advise_s']:.2f} s | {res['shard_key_s']:.2f} s |")
        lines.append(f"\nfindings: {', '.join(res['findings'])}")
    text = "\n".join(lines)
    print(text)
    if args.write:
        with open(RESULTS, "a", encoding="utf-8") as f:
            f.write(text + "\n\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
