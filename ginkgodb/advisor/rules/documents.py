"""Rules on document size and growth: unbounded-array, large-document, compressible-large-field."""
from __future__ import annotations

from .. import thresholds as T
from ..findings import Finding
from . import rule
from .common import human


@rule("unbounded-array")
def unbounded_array(cf) -> list[Finding]:
    out = []
    pushes = _pushed_fields(cf)
    for fs in cf.fields.values():
        if not fs.arrays:
            continue
        big = fs.max_array >= T.ARRAY_MAX_LEN or (fs.max_bytes >= T.ARRAY_MAX_BYTES)
        if not big:
            continue
        unsliced = fs.path in pushes
        out.append(Finding(
            "unbounded-array", "high" if unsliced or fs.max_array >= 10 * T.ARRAY_MAX_LEN else "medium", cf.ns,
            f"array '{fs.path}' holds up to {fs.max_array} elements ({human(fs.max_bytes)})"
            + (" and grows by $push without $slice" if unsliced else ""),
            "Bound the array ($push with $each/$slice) or move its elements to their own collection "
            "referencing this document: growing documents are rewritten on every change and approach "
            "the 16 MB limit.",
            {"maxElements": fs.max_array, "avgElements": round(fs.total_array / fs.arrays, 1),
             "maxBytes": fs.max_bytes, "unslicedPushes": unsliced}))
    return out


def _pushed_fields(cf) -> set[str]:
    """Fields the profiled updates $push/$addToSet to without $slice."""
    out: set[str] = set()
    for p in cf.profile:
        u = (p.get("command") or {}).get("u")
        if not isinstance(u, dict):
            continue
        for op in ("$push", "$addToSet"):
            for f, spec in (u.get(op) or {}).items():
                if not (isinstance(spec, dict) and "$slice" in spec):
                    out.add(f)
    return out


@rule("large-document")
def large_document(cf) -> list[Finding]:
    biggest = max(cf.sample_sizes, default=0)
    if biggest < T.LARGE_DOC_MAX and cf.avg_size < T.LARGE_DOC_AVG:
        return []
    return [Finding(
        "large-document", "high" if biggest >= 0.75 * T.MAX_BSON else "medium", cf.ns,
        f"documents average {human(cf.avg_size)}, the largest sampled is {human(biggest)} "
        f"({100 * biggest / T.MAX_BSON:.0f}% of the 16 MB limit)",
        "Store large binary content in GridFS (256 KB chunks) or split rarely read parts into a "
        "referenced collection, so documents stay well under 16 MB.",
        {"avgBytes": int(cf.avg_size), "maxSampledBytes": biggest, "limitBytes": T.MAX_BSON})]


@rule("compressible-large-field")
def compressible_large_field(cf) -> list[Finding]:
    frequent = [s for s in cf.shapes if int(s["metrics"]["execCount"]) >= T.FREQUENT_QUERIES]
    out = []
    for fs in cf.fields.values():
        if "." in fs.path or fs.avg_bytes < T.LARGE_FIELD or fs.present < 0.1 * max(len(cf.sample), 1):
            continue
        readers = [s for s in frequent if _returns(s, fs.path)]
        if not readers:
            continue
        execs = sum(int(s["metrics"]["execCount"]) for s in readers)
        returned = sum(int(s["metrics"]["docsReturned"]["sum"]) for s in readers)
        out.append(Finding(
            "compressible-large-field", "medium", cf.ns,
            f"field '{fs.path}' averages {human(fs.avg_bytes)} and {len(readers)} frequent query shape(s) "
            f"return it ({execs} executions, {returned} documents)",
            f"Compress '{fs.path}' in the application before storing it (or project it out of the "
            "frequent queries): at higher rates large returned fields saturate the network and the oplog.",
            {"avgBytes": int(fs.avg_bytes), "executions": execs, "documentsReturned": returned,
             "bytesReturnedEstimate": int(returned * fs.avg_bytes)}))
    return out


def _returns(shape: dict, path: str) -> bool:
    proj = shape["key"]["queryShape"].get("projection")
    if not proj:
        return True
    if path in proj:
        return bool(proj[path])
    included = any(v not in (0, False) for k, v in proj.items() if k != "_id")
    return not included
