"""Rules on the query workload ($queryStats): missing-index, case-insensitive-regex,
computed-pattern."""
from __future__ import annotations

from typing import Any, Optional

from .. import thresholds as T
from ..findings import Finding
from . import rule

_EQUALITY = ("$eq", "$in")
_RANGE = ("$gt", "$gte", "$lt", "$lte", "$ne", "$nin", "$regex", "$exists", "$type")


def filter_and_sort(shape: dict) -> tuple[dict, dict]:
    """The filter and sort of a find shape, or of an aggregate's leading $match and $sort."""
    if shape.get("command") == "aggregate":
        filt: dict = {}
        sort: dict = {}
        for stage in shape.get("pipeline", []):
            name = next(iter(stage))
            if name == "$match" and not filt and not sort:
                filt = stage[name]
            elif name == "$sort" and not sort:
                sort = stage[name]
            else:
                break
        return filt, sort
    return shape.get("filter") or {}, shape.get("sort") or {}


def _fields(filt: dict) -> tuple[list[str], list[str]]:
    """Equality and range fields of a shaped filter (top level and $and)."""
    eq: list[str] = []
    rng: list[str] = []
    for k, v in filt.items():
        if k == "$and" and isinstance(v, list):
            for branch in v:
                e, r = _fields(branch)
                eq += [f for f in e if f not in eq]
                rng += [f for f in r if f not in rng]
        elif not k.startswith("$") and isinstance(v, dict):
            if any(op in _EQUALITY for op in v) and not any(op in _RANGE for op in v):
                eq.append(k)
            elif any(op in _RANGE for op in v):
                rng.append(k)
    return eq, rng


def esr_index(shape: dict) -> Optional[dict]:
    """MongoDB's equality, sort, range order for the index that would serve the shape."""
    filt, sort = filter_and_sort(shape)
    eq, rng = _fields(filt)
    key: dict[str, Any] = {f: 1 for f in eq}
    for f, d in sort.items():
        if f not in key:
            key[f] = d if d in (1, -1) else 1
    for f in rng:
        if f not in key:
            key[f] = 1
    return key or None


def _served(cf, key: dict) -> bool:
    """An existing index has the suggested key as its prefix."""
    want = list(key)
    return any(list(ix["key"])[:len(want)] == want for ix in cf.indexes)


@rule("missing-index")
def missing_index(cf) -> list[Finding]:
    out = []
    for s in cf.shapes:
        m = s["metrics"]
        execs = int(m["execCount"])
        examined = int(m["docsExamined"]["sum"])
        returned = int(m["docsReturned"]["sum"])
        per_exec = examined / execs if execs else 0
        collscan = "COLLSCAN" in str(m.get("planSummary", "")) and execs >= T.COLLSCAN_EXECUTIONS \
            and per_exec >= 1
        ratio = examined / max(returned, 1)
        wasteful = ratio >= T.EXAMINED_RATIO and per_exec >= T.EXAMINED_MIN
        if not (collscan or wasteful):
            continue
        shape = s["key"]["queryShape"]
        filt, _ = filter_and_sort(shape)
        eq, rng = _fields(filt)
        if not eq and rng and set(rng) <= set(_regex_i_fields(filt)):
            continue   # an index gives no bounds to a case-insensitive regex: case-insensitive-regex
        key = esr_index(shape)
        if key is None or (_served(cf, key) and not collscan):
            continue
        out.append(Finding(
            "missing-index", "high" if execs >= T.FREQUENT_QUERIES else "medium", cf.ns,
            f"a query shape ran {execs} times with {m.get('planSummary', '?')}, examining {examined} "
            f"documents for {returned} returned",
            f"Create the index {key} (equality fields, then the sort, then ranges): "
            f"db.{cf.name}.createIndex({key}).",
            {"queryShape": shape, "executions": execs, "docsExamined": examined, "docsReturned": returned,
             "planSummary": m.get("planSummary"), "suggestedIndex": key,
             "totalExecMicros": int(m["totalExecMicros"]["sum"])}))
    return out


def _regex_i_fields(filt: Any) -> list[str]:
    out = []
    if isinstance(filt, dict):
        for k, v in filt.items():
            if k in ("$and", "$or", "$nor") and isinstance(v, list):
                for b in v:
                    out += _regex_i_fields(b)
            elif isinstance(v, dict) and isinstance(v.get("$regex"), str) and v["$regex"].startswith("?regex/") \
                    and "i" in v["$regex"].split("/", 1)[1]:
                out.append(k)
    return out


@rule("case-insensitive-regex")
def case_insensitive_regex(cf) -> list[Finding]:
    out = []
    for s in cf.shapes:
        execs = int(s["metrics"]["execCount"])
        if execs < T.REGEX_I_EXECUTIONS:
            continue
        filt, _ = filter_and_sort(s["key"]["queryShape"])
        for f in _regex_i_fields(filt):
            out.append(Finding(
                "case-insensitive-regex", "medium", cf.ns,
                f"'{f}' is searched {execs} times with a case-insensitive $regex "
                f"({int(s['metrics']['docsExamined']['sum'])} documents examined)",
                f"Store a normalized copy ('{f}_upper', upper-cased by the application) and index it, or "
                f"create an index on '{f}' with collation {{locale: 'en', strength: 2}} and query with that "
                "collation: a case-insensitive regex cannot use index bounds and costs CPU on every document.",
                {"field": f, "executions": execs, "queryShape": s["key"]["queryShape"]}))
    return out


@rule("computed-pattern")
def computed_pattern(cf) -> list[Finding]:
    out = []
    for s in cf.shapes:
        shape = s["key"]["queryShape"]
        if shape.get("command") != "aggregate":
            continue
        stages = [next(iter(st)) for st in shape.get("pipeline", [])]
        if not any(st in ("$group", "$count", "$bucket", "$bucketAuto", "$sortByCount") for st in stages):
            continue
        m = s["metrics"]
        execs = int(m["execCount"])
        per_exec = int(m["docsExamined"]["sum"]) / execs if execs else 0
        if execs < T.COMPUTED_EXECUTIONS or per_exec < T.COMPUTED_EXAMINED:
            continue
        out.append(Finding(
            "computed-pattern", "medium", cf.ns,
            f"an aggregation ({' → '.join(stages)}) is recomputed {execs} times over "
            f"{per_exec:.0f} documents each",
            "Keep the result as pre-aggregated fields updated with $inc when the data changes "
            "(seed 001's daily/weekly/monthly counters), or refresh a summary collection with $merge.",
            {"queryShape": shape, "executions": execs, "docsExaminedPerExecution": round(per_exec, 1)}))
    return out
