"""Deletes and updates on a time-series namespace, as MongoDB 7.0 allows them on any field.

Each statement reads the buckets its bucket-level predicate admits, unpacks them and matches the
measurements; a bucket losing all of its measurements is deleted, one losing some is written
again without them. An update removes the measurements it changes from their buckets and routes
the new versions as inserts (their meta or time may have changed), as mongod 7.0 does.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

import bson

from ...errors import CommandError, ErrorCode
from ...query.match import compile_filter
from ...query.update import compile_update
from .. import plan_builder as Q
from ..records import delete_record, keep_id, update_record
from .buckets import measurements_of, rebuild
from .inserts import Router
from .options import buckets_name
from .rewrite import bucket_predicate
from .stats import add as add_stats


def _refuse(kind: str, st: Any) -> None:
    if st.collation:
        raise CommandError(ErrorCode.NotImplemented,
                           f"{kind} with 'collation' on a time-series collection is not supported by ginkgodb yet")
    if st.hint is not None:
        raise CommandError(ErrorCode.NotImplemented,
                           f"{kind} with 'hint' on a time-series collection is not supported by ginkgodb yet")


class _Buckets:
    """The buckets one statement looks at, and how it changes them."""

    def __init__(self, engine: Any, batch: Any, db: str, name: str, ts: dict) -> None:
        self.engine, self.batch, self.db, self.name = engine, batch, db, buckets_name(name)
        self.time_field, self.meta_field = ts["timeField"], ts.get("metaField")
        self.span, self.rounding = ts["bucketMaxSpanSeconds"], ts["bucketRoundingSeconds"]
        self.delta: Counter = Counter()

    def candidates(self, q: dict) -> list[tuple[int, bytes, dict]]:
        state = self.batch.collection(self.db, self.name)
        if state is None:
            return []
        predicate = bucket_predicate(q, self.time_field, self.meta_field, self.span) or {}
        built = Q.build(state, self.engine.reader(self.batch.txn), Q.FindRequest(filter=predicate), for_write=True)
        return [(rid, raw if raw is not None else bson.encode(doc), doc if doc is not None else bson.decode(raw))
                for rid, raw, doc in built.root.rows()]

    def replace(self, rid: int, raw: bytes, doc: dict, kept: list[dict]) -> None:
        state = self.batch.collection(self.db, self.name)
        if not kept:
            delete_record(self.batch, state, rid, doc, raw)
            return
        new = rebuild(doc, kept, self.time_field, self.meta_field, self.rounding)
        update_record(self.batch, state, rid, doc, raw, new)
        self.delta["numBucketUpdates"] += 1


def delete(engine: Any, batch: Any, db: str, name: str, ts: dict, st: Any) -> int:
    _refuse("delete", st)
    matcher = compile_filter(st.q, variables=st.variables)
    buckets = _Buckets(engine, batch, db, name, ts)
    removed = 0
    for rid, raw, doc in buckets.candidates(st.q):
        kept, gone = [], 0
        for m in measurements_of(doc, buckets.time_field, buckets.meta_field):
            if (not st.limit or removed + gone < 1) and matcher(m):
                gone += 1
            else:
                kept.append(m)
        if gone:
            buckets.replace(rid, raw, doc, kept)
            removed += gone
        if st.limit and removed:
            break
    add_stats(engine, f"{db}.{name}", buckets.delta)
    return removed


def update(engine: Any, batch: Any, db: str, name: str, ts: dict, st: Any) -> tuple[int, int]:
    """(matched, modified) of one update statement."""
    _refuse("update", st)
    if st.upsert:
        raise CommandError(ErrorCode.NotImplemented,
                           "upsert on a time-series collection is not supported by ginkgodb yet")
    matcher = compile_filter(st.q, variables=st.variables)
    plan = compile_update(st.u, array_filters=st.array_filters)
    buckets = _Buckets(engine, batch, db, name, ts)
    matched = 0
    routed: list[dict] = []
    for rid, raw, doc in buckets.candidates(st.q):
        kept, changed = [], []
        for m in measurements_of(doc, buckets.time_field, buckets.meta_field):
            if (st.multi or matched < 1) and matcher(m):
                matched += 1
                new = plan.apply(m)
                if plan.changes(m, new):
                    changed.append(keep_id(m, new))
                    continue
            kept.append(m)
        if changed:
            buckets.replace(rid, raw, doc, kept)
            routed += changed
        if not st.multi and matched:
            break
    # every removal is written before any new version is routed: a bucket is never changed by
    # both, and no new version is matched again by this statement
    router = Router(engine, batch, db, name, ts)
    for new in routed:
        router.add_measurement(new)
    delta = router.flush()
    delta.update(buckets.delta)
    add_stats(engine, f"{db}.{name}", delta)
    return matched, len(routed)
