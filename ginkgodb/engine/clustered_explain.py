"""explain of a scan over a clustered collection's records, as mongod's CLUSTERED_IXSCAN: one
stage holding the whole filter, its direction, and the `_id` bounds the filter gives
(`minRecord`/`maxRecord`; a side the filter leaves open is not shown). A scan with no `_id`
bounds (a sort on `_id`) is shown as the COLLSCAN it is."""
from __future__ import annotations

from typing import Any, Optional

_LOWER = ("$eq", "$gte", "$gt")
_UPPER = ("$eq", "$lte", "$lt")


def record_bounds(filter_spec: Optional[dict]) -> dict:
    """`{minRecord, maxRecord}` from the filter's own `_id` predicate."""
    if not filter_spec or "_id" not in filter_spec:
        return {}
    cond = filter_spec["_id"]
    if not isinstance(cond, dict) or not cond or not all(str(k).startswith("$") for k in cond):
        return {"minRecord": cond, "maxRecord": cond}
    out: dict = {}
    for op in _LOWER:
        if op in cond:
            out["minRecord"] = cond[op]
            break
    for op in _UPPER:
        if op in cond:
            out["maxRecord"] = cond[op]
            break
    return out


def clustered_scan_explain(filter_spec: Optional[dict], direction: int, stats: bool, n_returned: int,
                           works: int, docs_examined: int) -> dict:
    bounds = record_bounds(filter_spec)
    # an unbounded scan in _id order (a sort on _id) is the collection scan itself
    out: dict[str, Any] = {"stage": "CLUSTERED_IXSCAN" if bounds else "COLLSCAN"}
    if filter_spec:
        out["filter"] = filter_spec
    out["direction"] = "forward" if direction > 0 else "backward"
    out.update(bounds)
    if stats:
        out.update(nReturned=n_returned, works=works, docsExamined=docs_examined)
    return out
