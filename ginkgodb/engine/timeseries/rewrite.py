"""Predicates on measurements rewritten to predicates on buckets (docs/design/timeseries.md).

A bucket predicate is implied by the measurement predicate: every bucket holding a matching
measurement matches it, so the original `$match` still runs after unpacking and results are
exact. Rewritten: the metaField (renamed to `meta`, exact), and comparisons of the timeField
with a date, over `control.min`/`control.max` (bounded by bucketMaxSpanSeconds on the other side,
so the `{meta, control.min.<time>}` index bounds both ends).
"""
from __future__ import annotations

import datetime
from typing import Any, Optional

from ...query.pipeline.unpack_bucket import STAGE


def _time_clauses(op: str, v: Any, time_field: str, span: int) -> list[dict]:
    if not isinstance(v, datetime.datetime):
        return []
    lo, hi = f"control.min.{time_field}", f"control.max.{time_field}"
    delta = datetime.timedelta(seconds=span)
    out: list[dict] = []
    try:
        if op in ("$gt", "$gte"):
            out.append({hi: {op: v}})
            out.append({lo: {"$gt": v - delta}})
        elif op in ("$lt", "$lte"):
            out.append({lo: {op: v}})
            out.append({hi: {"$lt": v + delta}})
        elif op == "$eq":
            out += [{lo: {"$lte": v}}, {hi: {"$gte": v}}, {lo: {"$gt": v - delta}}]
    except OverflowError:
        pass
    return out


def bucket_predicate(spec: Any, time_field: str, meta_field: Optional[str], span: int) -> Optional[dict]:
    """A filter over buckets implied by `spec` (a filter over measurements), or None."""
    if not isinstance(spec, dict):
        return None
    clauses: list[dict] = []
    for key, value in spec.items():
        if key == "$and" and isinstance(value, list):
            clauses += [p for p in (bucket_predicate(s, time_field, meta_field, span) for s in value) if p]
        elif key == "$or" and isinstance(value, list) and value:
            branches = [bucket_predicate(s, time_field, meta_field, span) for s in value]
            if all(branches):
                clauses.append({"$or": branches})
        elif key.startswith("$"):
            continue
        elif meta_field is not None and (key == meta_field or key.startswith(meta_field + ".")):
            clauses.append({"meta" + key[len(meta_field):]: value})
        elif key == time_field:
            if isinstance(value, dict) and value and all(k.startswith("$") for k in value):
                for op, v in value.items():
                    clauses += _time_clauses(op, v, time_field, span)
            else:
                clauses += _time_clauses("$eq", value, time_field, span)
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def _leading_match(stages: list) -> tuple[Optional[dict], int]:
    """The $match stages right after the unpack, as one filter, and how many there were."""
    found: list[dict] = []
    for stage in stages:
        if isinstance(stage, dict) and len(stage) == 1 and "$match" in stage and isinstance(stage["$match"], dict):
            found.append(stage["$match"])
        else:
            break
    if not found:
        return None, 0
    return (found[0] if len(found) == 1 else {"$and": found}), len(found)


def optimize(pipeline: list) -> list:
    """A time-series view's pipeline with the bucket-level $match put before the unpack."""
    if not pipeline or not isinstance(pipeline[0], dict) or STAGE not in pipeline[0]:
        return pipeline
    spec = pipeline[0][STAGE]
    event_filter, n = _leading_match(pipeline[1:])
    if event_filter is None:
        return pipeline
    predicate = bucket_predicate(event_filter, spec["timeField"], spec.get("metaField"),
                                 spec["bucketMaxSpanSeconds"])
    rest = [{"$match": event_filter}] + list(pipeline[1 + n:])
    if predicate is None:
        return [pipeline[0]] + rest
    return [{"$match": predicate}, pipeline[0]] + rest
