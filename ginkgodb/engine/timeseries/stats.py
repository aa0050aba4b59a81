"""collStats' `timeseries` section: the bucket catalog's counters, kept in memory per engine as
mongod keeps them (they start again from zero when the process starts)."""
from __future__ import annotations

import threading
import weakref
from collections import Counter
from typing import Any

_COUNTERS = ("numBucketInserts", "numBucketUpdates", "numBucketsOpenedDueToMetadata",
             "numBucketsClosedDueToCount", "numBucketsClosedDueToSchemaChange",
             "numBucketsClosedDueToSize", "numBucketsClosedDueToTimeForward",
             "numBucketsClosedDueToTimeBackward", "numBucketsClosedDueToMemoryThreshold",
             "numBucketsReopened", "numBucketsKeptOpenDueToLargeMeasurements",
             "numBucketsFetched", "numBucketsQueried", "numBucketFetchesFailed",
             "numBucketQueriesFailed", "numBucketReopeningsFailed", "numDuplicateBucketsReopened",
             "numCommits", "numWaits", "numMeasurementsCommitted")

_lock = threading.Lock()
_by_engine: weakref.WeakKeyDictionary[Any, dict[str, Counter]] = weakref.WeakKeyDictionary()
#: per engine and namespace: the (start, _id) of the bucket last filled per meta key (to name why
#: a bucket opened, and which stored buckets count as reopened)
_latest: weakref.WeakKeyDictionary[Any, dict[str, dict[bytes, Any]]] = weakref.WeakKeyDictionary()


def add(engine: Any, ns: str, delta: Counter) -> None:
    with _lock:
        _by_engine.setdefault(engine, {}).setdefault(ns, Counter()).update(delta)


def latest(engine: Any, ns: str) -> dict[bytes, Any]:
    with _lock:
        return _latest.setdefault(engine, {}).setdefault(ns, {})


def forget(engine: Any, ns: str) -> None:
    with _lock:
        _by_engine.get(engine, {}).pop(ns, None)
        _latest.get(engine, {}).pop(ns, None)


def section(engine: Any, ns: str, buckets_ns: str, bucket_count: int) -> dict:
    with _lock:
        counts = Counter(_by_engine.get(engine, {}).get(ns, Counter()))
    out: dict = {"bucketsNs": buckets_ns, "bucketCount": bucket_count}
    commits = counts["numCommits"]
    out["avgBucketSize"] = 0
    for name in _COUNTERS:
        out[name] = counts[name]
    out["avgNumMeasurementsPerCommit"] = counts["numMeasurementsCommitted"] // commits if commits else 0
    return out
