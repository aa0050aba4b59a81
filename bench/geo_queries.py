"""Geo queries on 100,000 points: a 2dsphere index against the collection scan.

    python -m bench.geo_queries [--points 100000] [--targets ginkgo-memory,ginkgo-lmdb,secantus-wire]
                                [--workloads near] [--repeats 5]

The points (GeoJSON) are spread uniformly over a 20 x 20 degree square near the equator; one
collection has a 2dsphere index, a copy has none. Measured, per target:

* `$geoWithin` of a 1% region (a 2 x 2 degree polygon, about 1,000 points): queries per second
  on the indexed collection and on the scan, and their ratio (target: indexed >= 20x the scan);
* `$near` with limit 10 from random centers (indexed only: without a geo index `$near` is 291
  NoQueryExecutionPlans, in mongod too): queries per second (target: >= 1,000 embedded), over
  50 centers repeated, and once over 500 new centers (no density hint kept for them yet).

Answers are checked (indexed `$geoWithin` against the scan's, ten `$near` answers against
distances computed here) and the number of wrong ones is reported.
"""
from __future__ import annotations

import argparse
import math
import random
import shutil
import statistics
import sys
import tempfile
import time
from typing import Any

from .per_target import measure_each, save
from .targets import make_target

R = 6378100.0


def _points(n: int, seed: int = 11) -> list[dict]:
    rng = random.Random(seed)
    return [{"_id": i, "loc": {"type": "Point", "coordinates": [rng.uniform(-10, 10), rng.uniform(-10, 10)]},
             "n": i % 7} for i in range(n)]


def _region(rng: random.Random) -> dict:
    x, y = rng.uniform(-9, 7), rng.uniform(-9, 7)
    ring = [[x, y], [x + 2, y], [x + 2, y + 2], [x, y + 2], [x, y]]
    return {"type": "Polygon", "coordinates": [ring]}


def _haversine(a: list, b: list) -> float:
    (lng1, lat1), (lng2, lat2) = [(math.radians(p[0]), math.radians(p[1])) for p in (a, b)]
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lng2 - lng1) / 2) ** 2
    return 2 * R * math.asin(math.sqrt(h))


def _rate(fn: Any, queries: list, min_seconds: float) -> tuple[float, list, float]:
    """Queries per second over the list (repeated until `min_seconds` passed), the answers, and
    queries per CPU-second of this process (steadier than wall time on a loaded machine; an
    embedded target's whole work, a wire target's client side only)."""
    answers = [fn(q) for q in queries]          # warm-up round, also the answers checked
    start, cpu_start = time.perf_counter(), time.process_time()
    done = 0
    while True:
        for q in queries:
            fn(q)
        done += len(queries)
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            cpu = time.process_time() - cpu_start
            return done / elapsed, answers, (done / cpu if cpu > 0 else math.nan)


def measure(target_name: str, n: int, min_seconds: float,
            workloads: tuple[str, ...] = ("within", "near"), repeats: int = 1) -> dict[str, Any]:
    workdir = tempfile.mkdtemp(prefix=f"geo-{target_name}-")
    target = make_target(target_name, workdir)
    client = target.open()
    db = client.bench_geo
    try:
        docs = _points(n)
        for name in ("scan", "indexed"):
            db[name].drop()
            for i in range(0, n, 5000):
                db[name].insert_many([dict(d) for d in docs[i:i + 5000]])
        started = time.perf_counter()
        db.indexed.create_index([("loc", "2dsphere")])
        build_s = time.perf_counter() - started
        rng = random.Random(5)
        regions = [_region(rng) for _ in range(20)]

        def within(coll: Any) -> Any:
            return lambda region: sorted(d["_id"] for d in coll.find(
                {"loc": {"$geoWithin": {"$geometry": region}}}, {"_id": 1}))
        scan_qps = index_qps = math.nan
        within_wrong, sizes = 0, []
        if "within" in workloads:
            scan_qps, scan_answers, _ = _rate(within(db.scan), regions[:3], min_seconds)
            index_qps, index_answers, _ = _rate(within(db.indexed), regions[:3], min_seconds)
            within_wrong = sum(a != b for a, b in zip(index_answers, scan_answers))
            sizes = [len(a) for a in scan_answers]

        centers = [[rng.uniform(-9.5, 9.5), rng.uniform(-9.5, 9.5)] for _ in range(50)]
        by_id = {d["_id"]: d["loc"]["coordinates"] for d in docs}

        def near(center: list) -> list:
            query = {"loc": {"$near": {"$geometry": {"type": "Point", "coordinates": center}}}}
            return [d["_id"] for d in db.indexed.find(query, {"_id": 1}).limit(10)]
        near_runs: list[tuple[float, float]] = []
        near_answers: list = []
        for _ in range(repeats if "near" in workloads else 0):
            qps, near_answers, cpu_qps = _rate(near, centers, min_seconds)
            near_runs.append((qps, cpu_qps))
        near_qps = statistics.median(r[0] for r in near_runs) if near_runs else math.nan
        near_cpu_qps = statistics.median(r[1] for r in near_runs) if near_runs else math.nan
        # Each center once, none seen before: what a search pays when nothing is cached for its
        # neighbourhood (the 2dsphere index keeps sampled densities as sizing hints).
        fresh_qps = fresh_cpu_qps = math.nan
        if "near" in workloads:
            fresh = [[rng.uniform(-9.5, 9.5), rng.uniform(-9.5, 9.5)] for _ in range(500)]
            start, cpu_start = time.perf_counter(), time.process_time()
            for center in fresh:
                near(center)
            fresh_qps = len(fresh) / (time.perf_counter() - start)
            cpu = time.process_time() - cpu_start
            fresh_cpu_qps = len(fresh) / cpu if cpu > 0 else math.nan
        near_wrong = 0
        for center, got in zip(centers[:10], near_answers):
            want = sorted(_haversine(center, by_id[i]) for i in by_id)[:10]
            dist = [_haversine(center, by_id[i]) for i in got]
            if len(got) != 10 or any(abs(a - b) > 1e-6 for a, b in zip(dist, want)):
                near_wrong += 1
    finally:
        target.close()
        shutil.rmtree(workdir, ignore_errors=True)   # 100,000 points twice: do not leave them behind
    return {"target": target_name, "points": n, "index_build_s": round(build_s, 2),
            "within_matches": sizes, "within_scan_qps": round(scan_qps, 2),
            "within_indexed_qps": round(index_qps, 1),
            "within_speedup": round(index_qps / scan_qps, 1) if scan_qps == scan_qps else math.nan,
            "near10_qps": round(near_qps, 1), "near10_q_per_cpu_s": round(near_cpu_qps, 1),
            "near10_runs": [(round(a, 1), round(b, 1)) for a, b in near_runs],
            "near10_fresh_qps": round(fresh_qps, 1), "near10_fresh_q_per_cpu_s": round(fresh_cpu_qps, 1),
            "wrong_answers": {"within": within_wrong, "near_of_10_checked": near_wrong}}


def _spread(result: dict, which: int) -> str:
    """' (lo-hi)' of the repeated $near runs (nothing for one run)."""
    runs = [r[which] for r in result.get("near10_runs", [])]
    return f" ({min(runs)}-{max(runs)})" if len(runs) > 1 else ""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.geo_queries", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--points", type=int, default=100_000)
    p.add_argument("--seconds", type=float, default=3.0, help="minimum time per measurement")
    p.add_argument("--targets", default="ginkgo-memory,ginkgo-lmdb")
    p.add_argument("--workloads", default="within,near",
                   help="which of within,near to measure (the other's columns show nan)")
    p.add_argument("--repeats", type=int, default=1,
                   help="measure $near over the 50 centers this many times; the table shows the "
                        "median and the range (a shared machine's load moves between runs)")
    p.add_argument("--json", default=None, help="also write the results here")
    args = p.parse_args(argv)
    workloads = tuple(w.strip() for w in args.workloads.split(",") if w.strip())
    results = measure_each(args.targets, lambda name: measure(name, args.points, args.seconds, workloads,
                                                              max(1, args.repeats)))
    if results is None:
        return 2
    print("\n| target | points | $geoWithin 1% scan (q/s) | indexed (q/s) | speedup | $near limit 10 (q/s) "
          "| $near (q/CPU-s) | $near, new centers (q/s, q/CPU-s) | index build (s) | wrong answers |"
          "\n|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        if "error" in r:
            print(f"| {r['target']} | error: {r['error']} | | | | | | | | |")
        else:
            print(f"| {r['target']} | {r['points']} | {r['within_scan_qps']} | {r['within_indexed_qps']} | "
                  f"{r['within_speedup']}x | {r['near10_qps']}{_spread(r, 0)} | "
                  f"{r['near10_q_per_cpu_s']}{_spread(r, 1)} | "
                  f"{r['near10_fresh_qps']}, {r['near10_fresh_q_per_cpu_s']} | {r['index_build_s']} | "
                  f"{r['wrong_answers']} |")
    save(results, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
