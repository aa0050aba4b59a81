"""The seed's bucket arithmetic on real data: 100 sensors x 7 days of per-minute readings stored
(a) as one document per reading, (b) as the seed's hand-made hourly buckets (one document per
sensor per hour holding an array of 60 readings) and (c) as a time-series collection; documents,
`_id`/index bytes and data bytes (collStats), and the time of a one-sensor one-day range query.

    PYTHONPATH=<checkout> python -m bench.timeseries [--sensors 100] [--days 7] [--markdown PATH]

Embedded client on LMDB in a temporary directory. (a) and (b) get the index their query needs
({sensor, ts} and {sensor, hour}); (c) has its default {metaField, timeField} index on buckets.
"""
from __future__ import annotations

import argparse
import datetime
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator

T0 = datetime.datetime(2024, 1, 1)
BATCH = 10_000


def readings(sensors: int, days: int) -> Iterator[dict]:
    rng = random.Random(7)
    for minute in range(days * 1440):
        ts = T0 + datetime.timedelta(minutes=minute)
        for s in range(sensors):
            yield {"sensor": s, "ts": ts, "temp": round(15 + 10 * rng.random(), 2)}


def hourly(sensors: int, days: int) -> Iterator[dict]:
    rng = random.Random(7)
    for hour in range(days * 24):
        start = T0 + datetime.timedelta(hours=hour)
        for s in range(sensors):
            yield {"sensor": s, "hour": start,
                   "readings": [{"m": m, "temp": round(15 + 10 * rng.random(), 2)} for m in range(60)]}


def _load(coll, docs: Iterator[dict]) -> float:
    started = time.perf_counter()
    chunk: list[dict] = []
    for d in docs:
        chunk.append(d)
        if len(chunk) == BATCH:
            coll.insert_many(chunk, ordered=True)
            chunk = []
    if chunk:
        coll.insert_many(chunk)
    return time.perf_counter() - started


def _timed(query: Callable[[], list], rounds: int = 7) -> tuple[float, int]:
    times, n = [], 0
    for _ in range(rounds):
        started = time.perf_counter()
        n = len(query())
        times.append(time.perf_counter() - started)
    return statistics.median(times), n


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sensors", type=int, default=100)
    parser.add_argument("--days", type=int, default=7)
    parser.add_argument("--markdown")
    args = parser.parse_args(argv)
    import ginkgodb
    client = ginkgodb.MongoClient(tempfile.mkdtemp(prefix="bench-ts-"))
    db = client.bench
    day = {"$gte": T0 + datetime.timedelta(days=3), "$lt": T0 + datetime.timedelta(days=4)}
    rows = []

    per = db.per_reading
    per.create_index([("sensor", 1), ("ts", 1)])
    load = _load(per, readings(args.sensors, args.days))
    q = _timed(lambda: list(per.find({"sensor": 42 % args.sensors, "ts": day})))
    rows.append(("(a) one document per reading", per, load, q))

    hand = db.hourly_buckets
    hand.create_index([("sensor", 1), ("hour", 1)])
    load = _load(hand, hourly(args.sensors, args.days))
    q = _timed(lambda: list(hand.find({"sensor": 42 % args.sensors, "hour": day})))
    rows.append(("(b) seed's hourly buckets", hand, load, q))

    db.create_collection("series", timeseries={"timeField": "ts", "metaField": "sensor", "granularity": "minutes"})
    series = db.series
    load = _load(series, readings(args.sensors, args.days))
    q = _timed(lambda: list(series.find({"sensor": 42 % args.sensors, "ts": day})))
    rows.append(("(c) time-series collection", series, load, q))

    load_avg = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    lines = [f"{args.sensors} sensors x {args.days} days of per-minute readings "
             f"({args.sensors * args.days * 1440:,} readings), embedded client on LMDB; "
             f"load average at the end {load_avg} on {os.cpu_count()} cores.", "",
             "| layout | documents | _id index bytes | all index bytes | data bytes (size) | storageSize |"
             " load s | one-sensor day query ms (results) |",
             "|---|---|---|---|---|---|---|---|"]
    for label, coll, load, (secs, n) in rows:
        stats = db.command("collStats", coll.name)
        docs = stats["count"]
        if "timeseries" in stats:
            docs = f"{stats['timeseries']['bucketCount']:,} buckets"
        else:
            docs = f"{docs:,}"
        lines.append(f"| {label} | {docs} | {stats['indexSizes'].get('_id_', 0):,} | {stats['totalIndexSize']:,} | "
                     f"{stats['size']:,} | {stats['storageSize']:,} | {load:.1f} | {secs * 1000:.2f} ({n}) |")
    series_stats = db.command("collStats", "series")["timeseries"]
    lines += ["", f"Time-series counters: numBucketInserts {series_stats['numBucketInserts']:,}, "
              f"numBucketUpdates {series_stats['numBucketUpdates']:,}, "
              f"avgNumMeasurementsPerCommit {series_stats['avgNumMeasurementsPerCommit']}, "
              f"numBucketsClosedDueToCount {series_stats['numBucketsClosedDueToCount']:,}, "
              f"numBucketsClosedDueToTimeForward {series_stats['numBucketsClosedDueToTimeForward']:,}."]
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("# Time-series storage: the seed's bucket arithmetic\n\n" + text + "\n")
    client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
