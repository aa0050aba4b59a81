"""Rules on indexes: redundant-index, unused-index, too-many-indexes."""
from __future__ import annotations

from .. import thresholds as T
from ..findings import Finding
from . import rule
from .common import human

_OPTIONS_THAT_MATTER = ("unique", "sparse", "partialFilterExpression", "collation", "expireAfterSeconds",
                        "hidden", "wildcardProjection")


def _plain_btree(ix: dict) -> bool:
    return all(isinstance(v, (int, float)) for v in ix["key"].values())


@rule("redundant-index")
def redundant_index(cf) -> list[Finding]:
    out = []
    for a in cf.indexes:
        if a["name"] == "_id_" or not _plain_btree(a):
            continue
        ka = list(a["key"].items())
        for b in cf.indexes:
            if b is a or not _plain_btree(b):
                continue
            kb = list(b["key"].items())
            if len(kb) <= len(ka) or kb[:len(ka)] != ka:
                continue
            if any(a.get(o) != b.get(o) for o in _OPTIONS_THAT_MATTER if o != "unique") or a.get("unique"):
                continue
            out.append(Finding(
                "redundant-index", "medium", cf.ns,
                f"index {a['name']} {a['key']} is a prefix of {b['name']} {b['key']}",
                f"Drop {a['name']}: {b['name']} serves every query it serves, and each index costs "
                "every write and its own memory and disk.",
                {"index": a["name"], "coveredBy": b["name"], "bytes": cf.index_sizes.get(a["name"], 0)},
                {"indexBytesSaved": cf.index_sizes.get(a["name"], T.INDEX_MIN_BYTES)}))
            break
    return out


@rule("unused-index")
def unused_index(cf) -> list[Finding]:
    if not cf.accesses:
        return []
    workload = sum(cf.accesses.values()) + cf.reads
    if workload == 0:
        return []   # nothing ran: no evidence either way
    out = []
    for ix in cf.indexes:
        name = ix["name"]
        if name == "_id_" or cf.accesses.get(name, 0) > 0 or "expireAfterSeconds" in ix:
            continue
        unique = bool(ix.get("unique"))
        out.append(Finding(
            "unused-index", "low" if unique else "medium", cf.ns,
            f"index {name} {ix['key']} served no operation while {workload} ran",
            ("It enforces uniqueness, so keep it if that constraint is needed; otherwise drop it. "
             if unique else f"Drop {name} (or hide it first with collMod hidden: true to check), ")
            + "it costs every write and its memory and disk.",
            {"index": name, "accesses": 0, "operationsObserved": workload,
             "bytes": cf.index_sizes.get(name, 0)},
            {"indexBytesSaved": cf.index_sizes.get(name, T.INDEX_MIN_BYTES)}))
    return out


@rule("too-many-indexes")
def too_many_indexes(cf) -> list[Finding]:
    n = len(cf.indexes)
    write_heavy = cf.writes > cf.reads
    if n < T.TOO_MANY_INDEXES and not (write_heavy and n >= T.TOO_MANY_INDEXES_WRITE_HEAVY):
        return []
    total = sum(cf.index_sizes.values()) or n * T.INDEX_MIN_BYTES
    return [Finding(
        "too-many-indexes", "medium" if write_heavy else "low", cf.ns,
        f"{n} indexes ({human(total)}) on a collection with {cf.writes} writes and {cf.reads} reads",
        "Every write updates every index: keep the indexes the queries use (see unused-index and "
        "redundant-index) and combine the rest into compound indexes.",
        {"indexes": n, "indexBytes": total, "writes": cf.writes, "reads": cf.reads,
         "minimumBytes": n * T.INDEX_MIN_BYTES})]
