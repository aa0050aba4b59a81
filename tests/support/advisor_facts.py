"""Facts built by hand for the rule tests: a collection's sample, indexes and workload."""
from __future__ import annotations

from typing import Any, Optional

import bson

from ginkgodb.advisor.collect import CollectionFacts
from ginkgodb.advisor.fields import field_stats


def facts(docs: list[dict], *, count: Optional[int] = None, indexes: Optional[list[dict]] = None,
          shapes: Optional[list[dict]] = None, profile: Optional[list[dict]] = None,
          accesses: Optional[dict] = None, top: Optional[dict] = None, index_sizes: Optional[dict] = None
          ) -> CollectionFacts:
    cf = CollectionFacts("db", "c")
    cf.sample = docs
    cf.sample_sizes = [len(bson.encode(d)) for d in docs]
    cf.count = count if count is not None else len(docs)
    cf.avg_size = sum(cf.sample_sizes) / len(docs) if docs else 0
    cf.size = int(cf.avg_size * cf.count)
    cf.fields = field_stats(docs)
    cf.indexes = [{"name": "_id_", "key": {"_id": 1}}] + (indexes or [])
    cf.index_sizes = index_sizes or {}
    cf.shapes = shapes or []
    cf.profile = profile or []
    cf.accesses = accesses if accesses is not None else {}
    cf.top = top
    return cf


def index(*fields: Any, **options: Any) -> dict:
    key = {f: 1 for f in fields} if all(isinstance(f, str) for f in fields) else dict(fields)
    return {"name": "_".join(f"{k}_{v}" for k, v in key.items()), "key": key, **options}


def _metric(total: int, execs: int) -> dict:
    return {"sum": total, "max": total // max(execs, 1), "min": 0, "sumOfSquares": 0}


def shape(filt: Optional[dict] = None, *, sort: Optional[dict] = None, pipeline: Optional[list] = None,
          execs: int = 100, examined: int = 0, returned: int = 0, plan: str = "COLLSCAN",
          projection: Optional[dict] = None) -> dict:
    q: dict = {"cmdNs": {"db": "db", "coll": "c"}}
    if pipeline is not None:
        q.update(command="aggregate", pipeline=pipeline)
    else:
        q.update(command="find", filter=filt or {})
        if sort:
            q["sort"] = sort
        if projection:
            q["projection"] = projection
    return {"key": {"queryShape": q}, "metrics": {
        "execCount": execs, "docsExamined": _metric(examined, execs), "docsReturned": _metric(returned, execs),
        "keysExamined": _metric(0, execs), "totalExecMicros": _metric(execs * 100, execs), "planSummary": plan}}
