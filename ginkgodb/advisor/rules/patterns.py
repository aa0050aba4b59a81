"""Seed 001's design patterns, proposed where the data shows their scenario: bucket-candidate,
attribute-pattern, schema-versions, approximation-candidate."""
from __future__ import annotations

import datetime
import re
from collections import Counter, defaultdict

from .. import thresholds as T
from ..findings import Finding
from . import rule
from .common import capacity, growth_per_day, human, id_entry_bytes

_VERSION_FIELD = re.compile(r"(schema_?version|schemaversion|version|_v|v)\Z", re.IGNORECASE)


def _date_field(cf):
    n = len(cf.sample)
    for fs in cf.fields.values():
        if "." not in fs.path and isinstance(fs.minimum, datetime.datetime) and fs.present >= 0.9 * n:
            return fs
    return None


def _entity_field(cf, exclude: set[str]):
    """The repeating field that names an entity (most distinct values among the repeating ones)."""
    n = len(cf.sample)
    best = None
    for fs in cf.fields.values():
        if "." in fs.path or fs.path in exclude or fs.present < 0.9 * n or fs.distinct_overflow:
            continue
        if not set(fs.types) <= {"str", "int", "ObjectId", "Int64"}:
            continue
        d = len(fs.distinct)
        if T.BUCKET_MIN_ENTITIES <= d <= T.BUCKET_ENTITY_SHARE * n and (best is None or d > len(best.distinct)):
            best = fs
    return best


@rule("bucket-candidate")
def bucket_candidate(cf) -> list[Finding]:
    if cf.count < 1000 or cf.avg_size > T.BUCKET_DOC_MAX or len(cf.sample) < 50:
        return []
    date = _date_field(cf)
    if date is None:
        return []
    entity = _entity_field(cf, {"_id", date.path})
    if entity is None:
        return []
    hours = max((date.maximum - date.minimum).total_seconds() / 3600, 1.0)
    entities = len(entity.distinct)
    per_hour = cf.count / (entities * hours)
    if per_hour < T.BUCKET_PER_HOUR:
        return []
    per_bucket = max(int(per_hour), 2)
    id_entry = id_entry_bytes(cf)
    header = sum(cf.fields[f].avg_bytes + len(f) + 2 for f in ("_id", entity.path, date.path) if f in cf.fields) + 5
    payload = max(cf.avg_size - header, 1.0)
    bucket_avg = header + per_bucket * payload * 0.8   # the events lose their repeated names and keys
    per_day = growth_per_day(cf)
    now = capacity(cf.count, cf.avg_size, id_entry, per_day)
    after = capacity(cf.count / per_bucket, bucket_avg, id_entry, per_day / per_bucket if per_day else None)
    return [Finding(
        "bucket-candidate", "medium", cf.ns,
        f"{cf.count} small documents ({human(cf.avg_size)} on average) for {entities} '{entity.path}' values: "
        f"about {per_hour:.0f} per '{entity.path}' per hour of '{date.path}'",
        f"Group each '{entity.path}''s measurements of one hour into one document with an array of events "
        f"(the bucket pattern), or use a time-series collection with timeField '{date.path}' and metaField "
        f"'{entity.path}': far fewer documents and index entries.",
        {"entityField": entity.path, "timeField": date.path, "entities": entities,
         "perEntityPerHour": round(per_hour, 1), "avgDocumentBytes": int(cf.avg_size)},
        {"current": now, "bucketedByHour": after, "documentsPerBucket": per_bucket})]


def _groups(cf) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = defaultdict(list)
    for path in cf.fields:
        if path.count(".") == 0 and "_" in path.strip("_"):
            groups[path.rsplit("_", 1)[0] + "_*"].append(path)
        elif path.count(".") == 1:
            groups[path.split(".")[0] + ".*"].append(path)
    return groups


@rule("attribute-pattern")
def attribute_pattern(cf) -> list[Finding]:
    out = []
    first_fields = [next(iter(ix["key"])) for ix in cf.indexes]
    for prefix, members in _groups(cf).items():
        if len(members) < T.ATTRIBUTE_FIELDS:
            continue
        types = Counter(t for m in members for t in cf.fields[m].types)
        if len(types) > 2:
            continue
        indexed = [m for m in members if m in first_fields]
        if len(indexed) < T.ATTRIBUTE_INDEXED:
            continue
        name = prefix[:-2].rstrip("_.") + "s" if not prefix[:-2].endswith("s") else prefix[:-2]
        bytes_ = sum(cf.index_sizes.get(ix["name"], T.INDEX_MIN_BYTES) for ix in cf.indexes
                     if next(iter(ix["key"])) in indexed)
        out.append(Finding(
            "attribute-pattern", "medium", cf.ns,
            f"{len(members)} similar fields ({', '.join(sorted(members)[:5])}{'…' if len(members) > 5 else ''}), "
            f"{len(indexed)} of them indexed separately",
            f"Turn them into an array '{name}: [{{k: <name>, v: <value>}}]' with one compound index "
            f"{{'{name}.k': 1, '{name}.v': 1}} (the attribute pattern): one index serves every attribute.",
            {"fields": sorted(members), "indexedFields": sorted(indexed), "indexBytes": bytes_},
            {"indexesBefore": len(indexed), "indexesAfter": 1}))
    return out


@rule("schema-versions")
def schema_versions(cf) -> list[Finding]:
    n = len(cf.sample)
    if n < 20:
        return []
    shapes = Counter(frozenset(d) for d in cf.sample)
    common = [(s, c) for s, c in shapes.most_common() if c >= T.SCHEMA_SHAPE_SHARE * n]
    if len(common) < 2:
        return []
    if any(_VERSION_FIELD.match(f) for s, _ in common for f in s):
        return []
    base = common[0][0]
    variants = [{"share": round(c / n, 3), "added": sorted(s - base), "missing": sorted(base - s)}
                for s, c in common]
    return [Finding(
        "schema-versions", "low", cf.ns,
        f"{len(common)} document shapes in the sample and no version field",
        "Add a 'schema_version' field (seed 001's version pattern): migrations can then filter the "
        "documents still to upgrade and the application can read each version explicitly.",
        {"shapes": variants, "sampled": n})]


@rule("approximation-candidate")
def approximation_candidate(cf) -> list[Finding]:
    ops = [p for p in cf.profile if p.get("op") in ("query", "insert", "update", "remove", "getmore")]
    counters = []
    for p in ops:
        u = (p.get("command") or {}).get("u")
        if p.get("op") == "update" and isinstance(u, dict) and list(u) == ["$inc"]:
            counters.append(p)
    if len(counters) < T.COUNTER_UPDATES or len(counters) < T.COUNTER_SHARE * len(ops):
        return []
    fields = Counter(f for p in counters for f in p["command"]["u"]["$inc"])
    targets = Counter(repr(p["command"].get("q")) for p in counters)
    return [Finding(
        "approximation-candidate", "medium", cf.ns,
        f"{len(counters)} of {len(ops)} profiled operations only $inc counters "
        f"({', '.join(f for f, _ in fields.most_common(3))}) on {len(targets)} document(s)",
        "Where an approximate count will do (page views, likes), increment by 10 once every ten "
        "events in the application (the approximation pattern): a tenth of the writes.",
        {"counterUpdates": len(counters), "profiledOperations": len(ops), "fields": dict(fields.most_common(5)),
         "distinctTargets": len(targets)},
        {"writesToday": len(counters), "writesEvery10": len(counters) // 10, "writesEvery100": len(counters) // 100})]
