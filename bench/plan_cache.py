"""A query whose candidate plans tie (two indexed equalities), with the plan cache and without it,
on ginkgodb and the peers (docs/design/plan_cache.md).

    python -m bench.plan_cache [--n 20000] [--targets ginkgo-lmdb,ginkgo-memory,ginkgo-wire,mongomock,mongita-memory]

Each target gets N documents `{a: i % 50, b: i % 40, v: i}` and the indexes `a_1` and
`b_1`, then runs `find({a: x, b: y})` to the end for pairs that match N/200 documents each. The
planner ranks both indexes equal, so without a cached plan each query runs the multi-planner's
trial over both. On ginkgodb targets three rows alternate in blocks, `--repeats` times (median
reported): the find as it runs (the cache holds the shape after the first query), `planCacheClear`
before each find (every find plans again), and `planCacheClear` alone; "without the cache" is the
second minus the third. Peers have no plan cache and run the find alone.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from .per_target import measure_each, save
from .targets import make_target

BLOCK = 200   # queries per block of one row


def _pairs(n: int) -> list[dict]:
    """Filters matching n/200 documents each: a = i % 50 and b = i % 40 agree modulo 10."""
    return [{"a": x, "b": y} for x in range(50) for y in range(40) if x % 10 == y % 10]


def _block_rate(op: Callable[[int], Any], start: int) -> float:
    began = time.perf_counter()
    for j in range(start, start + BLOCK):
        op(j)
    return BLOCK / (time.perf_counter() - began)


def measure(name: str, n: int, repeats: int) -> dict[str, Any]:
    workdir = tempfile.mkdtemp(prefix=f"plancache-{name}-")
    target = make_target(name, workdir)
    client = target.open()
    out: dict[str, Any] = {"target": name, "n": n}
    try:
        db = client.bench_plan_cache
        coll = db.docs
        docs = [{"a": i % 50, "b": i % 40, "v": i} for i in range(n)]
        for i in range(0, n, 1000):
            coll.insert_many(docs[i:i + 1000])
        coll.create_index("a")
        coll.create_index("b")
        filters = _pairs(n)
        expected = n // 200

        def find(j: int) -> None:
            got = sum(1 for _ in coll.find(filters[j % len(filters)]))
            if got != expected:
                raise AssertionError(f"{got} documents for {filters[j % len(filters)]}, expected {expected}")

        rows: dict[str, Callable[[int], Any]] = {"cached": find}
        if name.startswith("ginkgo"):
            def cleared(j: int) -> None:
                db.command("planCacheClear", "docs")
                find(j)
            rows["cleared"] = cleared
            rows["clear_only"] = lambda j: db.command("planCacheClear", "docs")
        for op in rows.values():   # warm up
            _block_rate(op, 0)
        rates: dict[str, list[float]] = {label: [] for label in rows}
        for r in range(repeats):
            for label, op in rows.items():
                rates[label].append(_block_rate(op, r * BLOCK))
        median = {label: statistics.median(v) for label, v in rates.items()}
        out["find_qps"] = round(median["cached"], 1)
        if "cleared" in median:
            uncached_s = 1 / median["cleared"] - 1 / median["clear_only"]
            out["find_qps_without_cache"] = round(1 / uncached_s, 1)
            out["speedup"] = round(median["cached"] * uncached_s, 2)
            find(0)
            [entry] = coll.aggregate([{"$planCacheStats": {}}])
            out["cached_index"] = entry["cachedPlan"]["inputStage"]["indexName"]
    finally:
        target.close()
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.plan_cache", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=20_000)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--targets", default="ginkgo-lmdb,ginkgo-memory,ginkgo-wire,mongomock,mongita-memory")
    p.add_argument("--json", default=None, help="also write the results here")
    args = p.parse_args(argv)
    results = measure_each(args.targets, lambda name: measure(name, args.n, args.repeats))
    if results is None:
        return 2
    print(f"\nfind {{a: x, b: y}} over {args.n:,} documents, {args.n // 200} results each (median of "
          f"{args.repeats} blocks of {BLOCK})\n")
    print("| target | queries/s | without the plan cache | speed-up | cached index |")
    print("|---|---|---|---|---|")
    for r in results:
        if "error" in r:
            print(f"| {r['target']} | error: {r['error']} | | | |")
            continue
        print(f"| {r['target']} | {r['find_qps']:,} | {r.get('find_qps_without_cache', '-')} | "
              f"{str(r['speedup']) + 'x' if 'speedup' in r else '-'} | {r.get('cached_index', '-')} |")
    save(results, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
