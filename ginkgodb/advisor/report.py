"""One run of the advisor: collect, judge, summarise for the renderers."""
from __future__ import annotations

import datetime
import math
import time
from typing import Any

from . import rules
from . import thresholds as T
from .collect import CollectionFacts, Options, collect
from .findings import Report
from .shard_key import analyse, parse

HISTOGRAM_BINS = 12
TOP_SHAPES = 15


def advise(client: Any, options: Options, target: str = "") -> Report:
    started = time.monotonic()
    facts = collect(client, options)
    report = Report(datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"), target, options.sample)
    report.notes.extend(facts.notes)
    by_ns: dict[str, CollectionFacts] = {}
    for dbf in facts.databases:
        report.findings.extend(rules.run("database", dbf))
        for cf in dbf.collections:
            by_ns[cf.ns] = cf
            report.findings.extend(rules.run("collection", cf))
            report.collections.append(summary(cf))
            report.query_shapes.extend(_shapes(cf))
    report.query_shapes.sort(key=lambda s: -s["totalExecMicros"])
    del report.query_shapes[TOP_SHAPES:]
    for spec in options.shard_keys:
        ns, key = parse(spec) if isinstance(spec, str) else spec
        cf = by_ns.get(ns)
        if cf is None:
            db, _, name = ns.partition(".")
            cf = _lone(client, db, name, options)
        sk = analyse(client, ns, key, cf.sample if cf else [], options.shards, sample_size=T.SHARD_KEY_SAMPLE)
        if cf is not None:
            sk.field_stats = cf.fields.get(next(iter(key)))
        if sk.error:
            report.notes.append(f"analyzeShardKey {ns} {key}: {sk.error}")
        report.findings.extend(rules.run("shard-key", sk))
        report.shard_keys.append({"namespace": ns, "key": key, "shards": sk.shards, "analysis": sk.analysis,
                                  "error": sk.error, "estimates": sk.estimates})
    report.seconds = time.monotonic() - started
    return report


def _lone(client: Any, db: str, name: str, options: Options):
    from .collect import Facts, _collection
    return _collection(client[db], name, options, Facts())


def histogram(sizes: list[int]) -> list[dict]:
    """Document sizes in logarithmic bins (powers of two from the smallest)."""
    if not sizes:
        return []
    lo = max(min(sizes), 1)
    hi = max(sizes)
    start = 2 ** int(math.floor(math.log2(lo)))
    bins = []
    edge = start
    while edge <= hi and len(bins) < 40:
        bins.append([edge, edge * 2, 0])
        edge *= 2
    for s in sizes:
        i = min(int(math.log2(max(s, 1) / start)), len(bins) - 1)
        bins[max(i, 0)][2] += 1
    return [{"from": a, "to": b, "count": c} for a, b, c in bins]


def summary(cf: CollectionFacts) -> dict:
    return {"namespace": cf.ns, "count": cf.count, "dataBytes": cf.size, "storageBytes": cf.storage_size,
            "avgDocumentBytes": int(cf.avg_size), "sampled": len(cf.sample),
            "maxSampledBytes": max(cf.sample_sizes, default=0),
            "sizeHistogram": histogram(cf.sample_sizes),
            "indexes": [{"name": ix["name"], "key": dict(ix["key"]), "bytes": cf.index_sizes.get(ix["name"], 0),
                         "accesses": cf.accesses.get(ix["name"])} for ix in cf.indexes],
            "reads": cf.reads, "writes": cf.writes}


def _shapes(cf: CollectionFacts) -> list[dict]:
    out = []
    for s in cf.shapes:
        m = s["metrics"]
        out.append({"namespace": cf.ns, "queryShape": s["key"]["queryShape"], "execCount": int(m["execCount"]),
                    "totalExecMicros": int(m["totalExecMicros"]["sum"]),
                    "docsExamined": int(m["docsExamined"]["sum"]), "keysExamined": int(m["keysExamined"]["sum"]),
                    "docsReturned": int(m["docsReturned"]["sum"]), "planSummary": m.get("planSummary")})
    return out
