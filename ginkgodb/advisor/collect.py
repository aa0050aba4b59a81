"""The facts the rules judge, read through a pymongo-shaped client only.

Per collection: `$collStats` sizes, the indexes with their `$indexStats` accesses, a random
sample of `Options.sample` documents (`$sample`, which ginkgodb and mongod answer with a random
cursor under 5% of the collection; all documents when the collection is smaller than the
sample), and the collection's share of the workload: `$queryStats` shapes, `top` counts and
the profiler's `system.profile` entries. A server that does not answer one of these (mongod
before 7.0.12 has no `$queryStats`, `top` needs a privilege) leaves a note instead.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

import bson
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument

from . import thresholds as T
from .fields import FieldStats, field_stats

_SYSTEM_DBS = ("admin", "config", "local")
_RAW = CodecOptions(document_class=RawBSONDocument)
PROFILE_ENTRIES = 10_000


@dataclass
class Options:
    db: Optional[str] = None
    collection: Optional[str] = None
    sample: int = T.DEFAULT_SAMPLE
    shard_keys: list[tuple[str, str]] = field(default_factory=list)   # (namespace, key spec text)
    shards: int = T.DEFAULT_SHARDS


@dataclass
class CollectionFacts:
    db: str
    name: str
    count: int = 0
    size: int = 0                 # data bytes (uncompressed BSON)
    storage_size: int = 0
    avg_size: float = 0.0
    capped: bool = False
    options: dict = field(default_factory=dict)
    indexes: list[dict] = field(default_factory=list)       # listIndexes documents
    index_sizes: dict = field(default_factory=dict)
    accesses: dict = field(default_factory=dict)            # index name -> ops (None: unknown)
    sample: list[dict] = field(default_factory=list)
    sample_sizes: list[int] = field(default_factory=list)
    fields: dict[str, FieldStats] = field(default_factory=dict)
    shapes: list[dict] = field(default_factory=list)        # $queryStats entries of this namespace
    top: Optional[dict] = None                              # top's row of this namespace
    profile: list[dict] = field(default_factory=list)       # system.profile entries of this namespace

    @property
    def ns(self) -> str:
        return f"{self.db}.{self.name}"

    @property
    def reads(self) -> int:
        if self.top is not None:
            return int(self.top.get("queries", {}).get("count", 0)) + int(self.top.get("getmore", {}).get("count", 0))
        return sum(int(s["metrics"]["execCount"]) for s in self.shapes)

    @property
    def writes(self) -> int:
        if self.top is not None:
            return sum(int(self.top.get(k, {}).get("count", 0)) for k in ("insert", "update", "remove"))
        return sum(1 for p in self.profile if p.get("op") in ("insert", "update", "remove"))


@dataclass
class DatabaseFacts:
    name: str
    collections: list[CollectionFacts] = field(default_factory=list)
    collection_count: int = 0
    index_count: int = 0


@dataclass
class Facts:
    databases: list[DatabaseFacts] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    query_stats_available: bool = False


def collect(client: Any, options: Options) -> Facts:
    facts = Facts()
    shapes = _query_stats(client, facts)
    top = _top(client, facts)
    names = [options.db] if options.db else [d for d in client.list_database_names() if d not in _SYSTEM_DBS]
    for name in names:
        db = client[name]
        colls = sorted(c for c in db.list_collection_names() if not c.startswith("system."))
        dbf = DatabaseFacts(name, collection_count=len(colls))
        profile = _profile(db, facts)
        for cname in colls:
            if options.collection and cname != options.collection:
                continue
            cf = _collection(db, cname, options, facts)
            if cf is None:
                continue
            cf.shapes = [s for s in shapes if _shape_ns(s) == (name, cname)]
            cf.top = top.get(cf.ns)
            cf.profile = [p for p in profile if p.get("ns") == cf.ns]
            dbf.index_count += len(cf.indexes)
            dbf.collections.append(cf)
        facts.databases.append(dbf)
    return facts


#: the advisor's own reads, left out of the workload it judges (a data directory keeps the
#: statistics of the previous run, this one's included)
OWN_SHAPES = ({"command": "aggregate", "pipeline": [{"$sample": {"size": "?number"}}]},
              {"command": "find", "filter": {}})


def _own(entry: Mapping) -> bool:
    shape = {k: v for k, v in entry.get("key", {}).get("queryShape", {}).items() if k != "cmdNs"}
    return shape in OWN_SHAPES


def _shape_ns(entry: Mapping) -> tuple:
    ns = entry.get("key", {}).get("queryShape", {}).get("cmdNs", {})
    return ns.get("db"), ns.get("coll")


def _query_stats(client: Any, facts: Facts) -> list[dict]:
    try:
        out = list(client.admin.aggregate([{"$queryStats": {}}]))
    except Exception as exc:
        facts.notes.append(f"$queryStats unavailable ({_why(exc)}): query-shape rules had no workload to judge")
        return []
    facts.query_stats_available = True
    return [e for e in out if not _own(e)]


def _top(client: Any, facts: Facts) -> dict:
    try:
        totals = client.admin.command("top")["totals"]
    except Exception as exc:
        facts.notes.append(f"top unavailable ({_why(exc)}): read/write mix taken from the profiler")
        return {}
    return {k: v for k, v in totals.items() if isinstance(v, Mapping)}


def _profile(db: Any, facts: Facts) -> list[dict]:
    try:
        if "system.profile" not in db.list_collection_names():
            return []
        return list(db["system.profile"].find({}, {"ns": 1, "op": 1, "command": 1, "millis": 1,
                                                   "planSummary": 1, "docsExamined": 1, "nreturned": 1}
                                              ).sort("$natural", -1).limit(PROFILE_ENTRIES))
    except Exception as exc:
        facts.notes.append(f"{db.name}.system.profile unreadable ({_why(exc)})")
        return []


def _why(exc: Exception) -> str:
    return str(getattr(exc, "details", None) and exc.details.get("errmsg") or exc).splitlines()[0][:160]


def _collection(db: Any, name: str, options: Options, facts: Facts) -> Optional[CollectionFacts]:
    coll = db[name]
    cf = CollectionFacts(db.name, name)
    try:
        stats = next(coll.aggregate([{"$collStats": {"storageStats": {}}}]))["storageStats"]
    except StopIteration:
        return None
    except Exception as exc:   # a view has no storage statistics
        facts.notes.append(f"{cf.ns}: skipped ({_why(exc)})")
        return None
    cf.count = int(stats.get("count", 0))
    cf.size = int(stats.get("size", 0))
    cf.storage_size = int(stats.get("storageSize", 0))
    cf.avg_size = float(stats.get("avgObjSize", 0) or (cf.size / cf.count if cf.count else 0))
    cf.capped = bool(stats.get("capped"))
    cf.index_sizes = {k: int(v) for k, v in (stats.get("indexSizes") or {}).items()}
    cf.indexes = [{**dict(ix), "key": dict(ix["key"])} for ix in coll.list_indexes()]
    try:
        cf.accesses = {s["name"]: int(s["accesses"]["ops"]) for s in coll.aggregate([{"$indexStats": {}}])}
    except Exception as exc:
        facts.notes.append(f"{cf.ns}: $indexStats unavailable ({_why(exc)})")
    raw = coll.with_options(codec_options=_RAW)
    if cf.count <= options.sample:
        docs = list(raw.find())
    else:
        docs = list(raw.aggregate([{"$sample": {"size": options.sample}}]))
    cf.sample_sizes = [len(d.raw) for d in docs]
    cf.sample = [bson.decode(d.raw) for d in docs]
    cf.fields = field_stats(cf.sample)
    return cf
