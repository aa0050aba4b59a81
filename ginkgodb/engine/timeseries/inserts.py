"""Inserts into a time-series namespace: each measurement goes to the open bucket of its meta
value whose time range holds it, or to a new one, in the same write batch as everything else.

The bucket is found in storage (the buckets' `{meta, control.min.<time>}` index, or their _id,
whose timestamp is the bucket's start), so the choice is right after a restart and inside a
transaction; within one batch the buckets it touched are kept and written once at the end.
"""
from __future__ import annotations

import datetime
from collections import Counter
from typing import Any, Optional

import bson
from bson.objectid import ObjectId
from bson.raw_bson import RawBSONDocument

from ...bsonutil.sentinels import ABSENT
from .. import plan_builder as Q
from ..documents import prepare_insert
from ..records import insert_record, update_record
from .buckets import MAX_COUNT, MAX_SIZE, Bucket, check_time, encoded_size, meta_key, new_bucket, stored_bucket
from .stats import latest as latest_starts


def bucket_lookup_filter(meta: Any, time_field: str, t: datetime.datetime, span: int) -> dict:
    """Buckets of this meta value whose range [start, start + span) may hold time `t`."""
    clauses: list[dict] = []
    if meta is ABSENT:
        clauses.append({"meta": {"$exists": False}})
        try:
            low = ObjectId.from_datetime(t - datetime.timedelta(seconds=span))
            clauses.append({"_id": {"$gte": low}})
        except (OverflowError, ValueError, bson.errors.BSONError):
            pass
    else:
        clauses.append({"meta": {"$eq": meta}})
    clauses.append({f"control.min.{time_field}": {"$lte": t}})
    try:
        clauses.append({f"control.min.{time_field}": {"$gt": t - datetime.timedelta(seconds=span)}})
    except OverflowError:
        pass
    return {"$and": clauses}


class Router:
    """Measurements of one write batch into buckets."""

    def __init__(self, engine: Any, batch: Any, db: str, name: str, ts: dict) -> None:
        from .options import buckets_name
        self.engine, self.batch, self.db = engine, batch, db
        self.ns, self.buckets = f"{db}.{name}", buckets_name(name)
        self.time_field: str = ts["timeField"]
        self.meta_field: Optional[str] = ts.get("metaField")
        self.span: int = ts["bucketMaxSpanSeconds"]
        self.rounding: int = ts["bucketRoundingSeconds"]
        self.open: dict[bytes, list[Bucket]] = {}
        self.order: list[Bucket] = []
        self.delta: Counter = Counter()

    def add(self, doc: Any) -> None:
        """One measurement (checked: its time, _id first, size and field names)."""
        d, raw = prepare_insert(doc)
        if not isinstance(doc, RawBSONDocument):
            d = bson.decode(raw)  # times as stored: naive UTC, whatever the caller's tzinfo
        t = check_time(d, self.time_field)
        meta = d.get(self.meta_field, ABSENT) if self.meta_field is not None else ABSENT
        measurement = {k: v for k, v in d.items() if k != self.meta_field} if meta is not ABSENT else d
        size = len(raw)
        bucket = self._bucket_for(meta, t, size)
        bucket.add(measurement, size)

    def add_measurement(self, d: dict) -> None:
        """An already checked measurement (an update's result)."""
        t = check_time(d, self.time_field)
        meta = d.get(self.meta_field, ABSENT) if self.meta_field is not None else ABSENT
        measurement = {k: v for k, v in d.items() if k != self.meta_field} if meta is not ABSENT else d
        size = encoded_size(d)
        self._bucket_for(meta, t, size).add(measurement, size)

    def _fits(self, bucket: Bucket, t: datetime.datetime, size: int) -> bool:
        start = bucket.min_time
        return (bucket.count < MAX_COUNT and bucket.size + size <= MAX_SIZE
                and start <= t < start + datetime.timedelta(seconds=self.span))

    def _bucket_for(self, meta: Any, t: datetime.datetime, size: int) -> Bucket:
        key = meta_key(meta)
        known = self.open.setdefault(key, [])
        for bucket in reversed(known):
            if self._fits(bucket, t, size):
                return bucket
        seen = {b.rid for b in known if b.rid is not None}
        found = self._stored_candidates(meta, key, t, seen)
        for bucket in found:
            known.append(bucket)
        latest = latest_starts(self.engine, self.ns)
        for bucket in sorted(found, key=lambda b: b.min_time, reverse=True):
            if self._fits(bucket, t, size):
                # the bucket this process last filled for the meta is still open; any other is
                # reopened (mongod 7.0 reopens a stored bucket with room for an older time)
                if latest.get(key, (None, None))[1] != bucket.doc["_id"]:
                    self.delta["numBucketsReopened"] += 1
                    latest[key] = (bucket.min_time, bucket.doc["_id"])
                return bucket
        self._count_reason(key, known, t, size)
        bucket = new_bucket(meta, self.time_field, t, self.rounding)
        known.append(bucket)
        self.order.append(bucket)
        latest[key] = (bucket.min_time, bucket.doc["_id"])
        return bucket

    def _stored_candidates(self, meta: Any, key: bytes, t: datetime.datetime, seen: set) -> list[Bucket]:
        state = self.batch.collection(self.db, self.buckets)
        if state is None:
            return []
        req = Q.FindRequest(filter=bucket_lookup_filter(meta, self.time_field, t, self.span))
        built = Q.build(state, self.engine.reader(self.batch.txn), req, for_write=True)
        out = []
        for rid, raw, doc in built.root.rows():
            if rid in seen:
                continue
            doc = doc if doc is not None else bson.decode(raw)
            if meta_key(doc.get("meta", ABSENT)) != key:
                continue
            out.append(stored_bucket(rid, doc, raw if raw is not None else bson.encode(doc), self.time_field))
            self.order.append(out[-1])
        return out

    def _count_reason(self, key: bytes, known: list[Bucket], t: datetime.datetime, size: int) -> None:
        if known:
            last = max(known, key=lambda b: b.min_time)
            if last.count >= MAX_COUNT:
                self.delta["numBucketsClosedDueToCount"] += 1
            elif last.size + size > MAX_SIZE:
                self.delta["numBucketsClosedDueToSize"] += 1
            elif t < last.min_time:
                self.delta["numBucketsClosedDueToTimeBackward"] += 1
            else:
                self.delta["numBucketsClosedDueToTimeForward"] += 1
            return
        start = latest_starts(self.engine, self.ns).get(key, (None, None))[0]
        if start is None:
            self.delta["numBucketsOpenedDueToMetadata"] += 1
        elif t < start:
            self.delta["numBucketsClosedDueToTimeBackward"] += 1
        else:
            self.delta["numBucketsClosedDueToTimeForward"] += 1

    def flush(self) -> Counter:
        """Write every bucket this batch changed; the counters to add once it commits."""
        batch = self.batch
        for bucket in self.order:
            if not bucket.dirty:
                continue
            state = batch.collection(self.db, self.buckets)
            raw = bson.encode(bucket.doc)
            if bucket.rid is None:
                bucket.rid = insert_record(batch, state, bucket.doc, raw)
                self.delta["numBucketInserts"] += 1
            else:
                assert bucket.old is not None and bucket.old_raw is not None
                # logged as the whole bucket: diffing two 100 KB buckets costs more than the write
                update_record(batch, state, bucket.rid, bucket.old, bucket.old_raw, bucket.doc, "replace")
                self.delta["numBucketUpdates"] += 1
            self.delta["numCommits"] += 1
            self.delta["numMeasurementsCommitted"] += bucket.added
            bucket.dirty, bucket.added = False, 0
        return self.delta
