"""W14: the bucket pattern (time series readings grouped 60 to a document by upsert)."""
from __future__ import annotations

import math
from collections import Counter

from ..timing import Sample, measure
from .base import Context, workload

SENSORS = 50
BUCKET = 60


@workload("W14", "bucket upserts {sensor, count < 60}", "ops/s", needs_data=False)
def bucket_upserts(ctx: Context) -> Sample:
    coll, check = ctx.db["buckets"], ctx.check
    try:
        coll.create_index([("sensor", 1), ("count", 1)])
    except Exception as exc:  # noqa: BLE001 - unindexed upserts are still a measurement
        ctx.notes.append(f"no index on buckets (sensor, count) ({type(exc).__name__})")
    readings = min(20_000, max(ctx.ds.n // 5, 500))

    def op(j: int) -> int:
        result = coll.update_one(
            {"sensor": j % SENSORS, "count": {"$lt": BUCKET}},
            {"$push": {"readings": {"t": j, "v": j * 0.5}}, "$inc": {"count": 1}},
            upsert=True)
        check.equal(result.matched_count + (result.upserted_id is not None), 1, "matched or upserted")
        return 1

    sample = measure(op, readings, ctx.budget)
    _check_buckets(ctx, coll, sample.ops)
    return sample


def _check_buckets(ctx: Context, coll, done: int) -> None:
    per_sensor = Counter(j % SENSORS for j in range(done))
    buckets = Counter()
    total = 0
    for b in coll.find({}):
        buckets[b["sensor"]] += 1
        total += b["count"]
        ctx.check.expect(b["count"] == len(b["readings"]) <= BUCKET, "bucket count/readings", b["count"])
    ctx.check.equal(total, done, "readings stored across buckets")
    expected = {s: math.ceil(c / BUCKET) for s, c in per_sensor.items()}
    ctx.check.equal(dict(buckets), expected, "buckets per sensor")
