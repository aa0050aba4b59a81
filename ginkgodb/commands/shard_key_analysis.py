"""analyzeShardKey and configureQueryAnalyzer as MongoDB 7.0 answers them, on unsharded
collections (on a standalone too, where mongod refuses them: a documented extension), and
`top`'s per-namespace operation counts.

keyCharacteristics reads a random sample of the documents (random_sample.py; all of them when
the sample covers the collection), as mongod samples with sampleRate/sampleSize. The
read/write distribution classifies the queries the collection's query analyzer sampled
(engine.query_stats): equality on every shard-key field targets one shard; equality or a range
on the key's first field of a ranged key targets several; anything else is scatter-gather.
mongod decides with the chunk boundaries it would split at; without a cluster, ginkgodb decides
from the filter alone (docs/advisor.md).
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from typing import Any, Optional

import bson

from ..bsonutil import keycodec
from ..bsonutil.paths import embedded_value
from ..errors import CommandError, ErrorCode
from . import fields as P
from .context import CommandContext
from .declare import Args, boolean, command, doc, on_cluster, on_collection, string, value

#: analyzeShardKeyCharacteristicsDefaultSampleSize
DEFAULT_SAMPLE_SIZE = 10_000_000
#: analyzeShardKeyNumMostCommonValues
NUM_MOST_COMMON = 5
#: analyzeShardKeyMonotonicityCorrelationCoefficientThreshold
MONOTONIC_THRESHOLD = 0.7
#: `top`'s operation kinds, in the order engine.query_stats keeps them
TOP_KINDS = ("queries", "getmore", "insert", "update", "remove", "commands")
#: configureQueryAnalyzer's samplesPerSecond upper bound
MAX_SAMPLES_PER_SECOND = 50


def _namespace(ns: Any, name: str) -> tuple[str, str]:
    if not isinstance(ns, str):
        raise P.wrong_type(name, name, ns, "string")
    db, dot, coll = ns.partition(".")
    if not dot or not db or not coll:
        raise CommandError(ErrorCode.InvalidNamespace, f"Invalid namespace specified '{ns}'")
    return db, coll


def _stats(ctx: CommandContext) -> Any:
    engine = ctx.base_engine if ctx.base_engine is not None else ctx.engine
    return getattr(engine, "query_stats", None)


# ---------------------------------------------------------------------------------------- top
@command("top", admin_only=True, help="Usage statistics for each collection.",
         privileges=(on_cluster("top"),))
def top(ctx: CommandContext, args: Args) -> dict:
    stats = _stats(ctx)
    if stats is not None:
        stats.fold_all()    # recorded queries reach `top` when folded (query_stats.ShapeMetrics.top_cell)
    totals: dict[str, Any] = {"note": "all times in microseconds"}
    for ns, row in sorted((stats.top if stats is not None else {}).items()):
        reads = [row[0], row[1]]
        writes = [row[2], row[3], row[4]]
        entry: dict[str, Any] = {
            "total": _cell(sum(c[0] for c in row), sum(c[1] for c in row)),
            "readLock": _cell(sum(c[0] for c in reads), sum(c[1] for c in reads)),
            "writeLock": _cell(sum(c[0] for c in writes), sum(c[1] for c in writes))}
        for kind, cell in zip(TOP_KINDS, row):
            entry[kind] = _cell(*cell)
        totals[ns] = entry
    return {"totals": totals}


def _cell(micros: int, count: int) -> dict:
    from bson.int64 import Int64
    return {"time": Int64(micros), "count": Int64(count)}


# --------------------------------------------------------------------- configureQueryAnalyzer
@command("configureQueryAnalyzer", admin_only=True,
         help="Starts or stops sampling the queries of a collection for analyzeShardKey.",
         fields=(string("mode", required=True), value("samplesPerSecond")),
         privileges=(on_collection("configureQueryAnalyzer"),))
def configure_query_analyzer(ctx: CommandContext, args: Args) -> dict:
    db, coll = _namespace(args.value, "configureQueryAnalyzer")
    mode, rate = args.mode, args.samples_per_second
    if mode not in ("full", "off"):
        raise CommandError(ErrorCode.BadValue,
                           f"Enumeration value '{mode}' for field 'configureQueryAnalyzer.mode' is not a valid value.")
    if mode == "off" and rate is not None:
        raise CommandError(ErrorCode.InvalidOptions, "Cannot specify 'samplesPerSecond' when 'mode' is 'off'")
    if mode == "full":
        if rate is None:
            raise CommandError(ErrorCode.InvalidOptions, "Cannot specify 'mode' to 'full' without 'samplesPerSecond'")
        if isinstance(rate, bool) or not isinstance(rate, (int, float)):
            raise P.wrong_type("configureQueryAnalyzer", "samplesPerSecond", rate, "double")
        if not 0 < rate <= MAX_SAMPLES_PER_SECOND:
            raise CommandError(ErrorCode.InvalidOptions,
                               f"'samplesPerSecond' must be greater than 0 and less than or equal to "
                               f"{MAX_SAMPLES_PER_SECOND}")
    if ctx.engine.collection_entry(db, coll) is None:
        raise CommandError(ErrorCode.NamespaceNotFound,
                           f"Cannot configure query analyzer for a non-existing collection '{db}.{coll}'")
    stats = _stats(ctx)
    ns = f"{db}.{coll}"
    old = stats.analyzers.get(ns) if stats is not None else None
    new = {"mode": "full", "samplesPerSecond": float(rate)} if mode == "full" else {"mode": "off"}
    if stats is not None:
        if mode == "full":
            stats.analyzers[ns] = new
        else:
            stats.analyzers.pop(ns, None)
    reply: dict = {"newConfiguration": new}
    if old is not None:
        reply["oldConfiguration"] = old
    return reply


# ---------------------------------------------------------------------------- analyzeShardKey
@command("analyzeShardKey", admin_only=True, help="Metrics for evaluating a shard key of a collection.",
         fields=(doc("key", required=True), boolean("keyCharacteristics", True),
                 boolean("readWriteDistribution", True), value("sampleRate"), value("sampleSize")),
         privileges=(on_collection("analyzeShardKey"),))
def analyze_shard_key(ctx: CommandContext, args: Args) -> dict:
    db, coll = _namespace(args.value, "analyzeShardKey")
    key = dict(args.key)
    _check_key(key)
    if not args.key_characteristics and not args.read_write_distribution:
        raise CommandError(ErrorCode.InvalidOptions,
                           "Cannot specify both 'keyCharacteristics' and 'readWriteDistribution' to false")
    size = _sample_size(args.sample_rate, args.sample_size)
    meta = ctx.engine.collection_entry(db, coll)
    if meta is None:
        raise CommandError(ErrorCode.NamespaceNotFound,
                           f"Cannot analyze a shard key for a non-existing collection '{db}.{coll}'")
    reply: dict = {}
    if args.key_characteristics:
        index = supporting_index(meta.indexes, key)
        if index is None:
            if not args.read_write_distribution:
                raise CommandError(ErrorCode.IllegalOperation,
                                   "Cannot analyze the characteristics of a shard key that does not have a "
                                   "supporting index")
        else:
            reply["keyCharacteristics"] = _characteristics(ctx, db, coll, key, index, size)
    if args.read_write_distribution:
        stats = _stats(ctx)
        samples = stats.sampled.get(f"{db}.{coll}", []) if stats is not None else []
        reply.update(read_write_distribution(key, samples))
    return reply


def _check_key(key: dict) -> None:
    if not key:
        raise CommandError(ErrorCode.BadValue, "Shard key cannot be empty")
    hashed = [f for f, v in key.items() if v == "hashed"]
    for v in key.values():
        if v not in (1, 1.0, "hashed") or isinstance(v, bool):
            raise CommandError(ErrorCode.BadValue,
                               f"Shard key {bson.json_util.dumps(key)} is invalid: values must be 1 or 'hashed'")
    if len(hashed) > 1:
        raise CommandError(ErrorCode.BadValue, "A shard key can have at most one hashed field")


def _sample_size(rate: Any, size: Any) -> Optional[tuple[str, float]]:
    if rate is not None and size is not None:
        raise CommandError(ErrorCode.InvalidOptions, "Cannot specify both 'sampleRate' and 'sampleSize'")
    if rate is not None:
        if isinstance(rate, bool) or not isinstance(rate, (int, float)):
            raise P.wrong_type("analyzeShardKey", "sampleRate", rate, "double")
        if not 0 < rate <= 1:
            raise CommandError(ErrorCode.BadValue,
                               "'sampleRate' must be greater than 0 and less than or equal to 1")
        return ("rate", float(rate))
    if size is not None:
        if isinstance(size, bool) or not isinstance(size, int):
            raise P.wrong_type("analyzeShardKey", "sampleSize", size, "long")
        if size <= 0:
            raise CommandError(ErrorCode.BadValue, "'sampleSize' must be greater than 0")
        return ("size", float(size))
    return None


def supporting_index(indexes: list, key: dict) -> Any:
    """An index whose key starts with the shard key's fields (hashed where the key is hashed),
    not sparse, not partial, with the simple collation, as mongod requires."""
    fields = list(key.items())
    for ix in indexes:
        ikey = list(dict(ix.key).items())
        if len(ikey) < len(fields):
            continue
        if any(ikey[i][0] != f or (v == "hashed") != (ikey[i][1] == "hashed") for i, (f, v) in enumerate(fields)):
            continue
        opts = ix.options
        if opts.get("sparse") or opts.get("partialFilterExpression") or (
                opts.get("collation") and opts["collation"].get("locale") != "simple"):
            continue
        return ix
    return None


def _characteristics(ctx: CommandContext, db: str, coll: str, key: dict, index: Any,
                     size: Optional[tuple[str, float]]) -> dict:
    from bson.int64 import Int64
    sizes = ctx.engine.collection_stats(db, coll)
    total = sizes.count if sizes is not None else 0
    if size is None:
        wanted = DEFAULT_SAMPLE_SIZE
    elif size[0] == "rate":
        wanted = max(1, math.ceil(total * size[1]))
    else:
        wanted = int(size[1])
    records = ctx.engine.sample_documents(db, coll, min(wanted, total) if total else wanted)
    fields = list(key)
    values: list[tuple[bytes, int, tuple]] = []
    for rid, raw in records:
        doc = bson.decode(raw)
        vals = tuple(embedded_value(doc, f) for f in fields)
        values.append((keycodec.encode_key(vals), rid, vals))
    counts = Counter(v[0] for v in values)
    by_key = {v[0]: v[2] for v in values}
    sampled = len(values)
    scale = total / sampled if sampled else 0.0
    common = [{"value": dict(zip(fields, by_key[k])), "frequency": Int64(round(n * scale))}
              for k, n in counts.most_common(NUM_MOST_COMMON)]
    out: dict[str, Any] = {
        "numDocsTotal": Int64(total), "numDocsSampled": Int64(sampled),
        "avgDocSizeBytes": Int64(sizes.data_size // total if sizes is not None and total else 0),
        "numDistinctValues": Int64(len(counts)),
        "isUnique": bool(index.unique and len(dict(index.key)) == len(key)),
        "mostCommonValues": common,
        "monotonicity": _monotonicity(key, values)}
    return out


def _monotonicity(key: dict, values: list[tuple[bytes, int, tuple]]) -> dict:
    """How closely the key's order follows the insertion (record id) order: mongod's
    recordIdCorrelationCoefficient, "monotonic" at 0.7 or more. Hashed keys are not monotonic."""
    if "hashed" in key.values():
        return {"type": "not monotonic"}
    if len(values) < 2:
        return {"type": "unknown"}
    ordered = sorted(values, key=lambda v: (v[0], v[1]))
    rids = [v[1] for v in ordered]
    n = len(rids)
    xs = range(n)
    mean_x, mean_y = (n - 1) / 2, sum(rids) / n
    cov = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, rids))
    var_x = sum((x - mean_x) ** 2 for x in xs)
    var_y = sum((y - mean_y) ** 2 for y in rids)
    if var_y == 0 or var_x == 0:
        return {"recordIdCorrelationCoefficient": 0.0, "type": "not monotonic"}
    r = cov / math.sqrt(var_x * var_y)
    return {"recordIdCorrelationCoefficient": round(r, 10),
            "type": "monotonic" if abs(r) >= MONOTONIC_THRESHOLD else "not monotonic"}


# ------------------------------------------------------------------- read/write distribution
SINGLE, MULTI, SCATTER = "single", "multi", "scatter"
_RANGE_OPS = frozenset({"$gt", "$gte", "$lt", "$lte"})


def _conditions(filt: Mapping) -> dict[str, Any]:
    """Top-level conditions per field, $and branches included."""
    out: dict[str, Any] = {}
    for k, v in filt.items():
        if k == "$and" and isinstance(v, list):
            for branch in v:
                if isinstance(branch, Mapping):
                    out.update(_conditions(branch))
        elif not k.startswith("$"):
            out[k] = v
    return out


def _kind(cond: Any) -> str:
    """'eq', 'range' or '' for one field's condition."""
    if not isinstance(cond, Mapping) or not cond or not next(iter(cond)).startswith("$"):
        return "eq"
    ops = set(cond)
    if ops == {"$eq"}:
        return "eq"
    if ops == {"$in"} and isinstance(cond["$in"], list):
        return "eq" if len(cond["$in"]) == 1 else "range"
    if ops and ops <= _RANGE_OPS:
        return "range"
    return ""


def target_of(key: dict, filt: Mapping) -> str:
    """How a query with this filter is routed under the candidate key."""
    conds = _conditions(filt)
    kinds = [_kind(conds[f]) if f in conds else "" for f in key]
    if all(k == "eq" for k in kinds):
        return SINGLE
    first = next(iter(key))
    if key[first] != "hashed" and kinds[0] in ("eq", "range"):
        return MULTI
    return SCATTER


def _updates_key(key: dict, update: Any) -> bool:
    if isinstance(update, list):
        return True   # a pipeline may set anything
    if not isinstance(update, Mapping):
        return False
    if update and not next(iter(update)).startswith("$"):
        return True   # a replacement document may change the key
    touched = {f for spec in update.values() if isinstance(spec, Mapping) for f in spec}
    return any(t == f or t.startswith(f + ".") or f.startswith(t + ".") for t in touched for f in key)


def _percent(n: int, total: int) -> float:
    return round(100.0 * n / total, 10) if total else 0.0


def read_write_distribution(key: dict, samples: list) -> dict:
    from bson.int64 import Int64
    reads = [s for s in samples if s[0] in ("find", "aggregate", "count", "distinct")]
    writes = [s for s in samples if s[0] in ("update", "delete", "findAndModify")]
    read_counts = Counter(target_of(key, s[1]) for s in reads)
    read: dict[str, Any] = {"sampleSize": {"total": Int64(len(reads)),
                                           **{c: Int64(sum(1 for s in reads if s[0] == c))
                                              for c in ("find", "aggregate", "count", "distinct")}}}
    if reads:
        read.update({"percentageOfSingleShardReads": _percent(read_counts[SINGLE], len(reads)),
                     "percentageOfMultiShardReads": _percent(read_counts[MULTI], len(reads)),
                     "percentageOfScatterGatherReads": _percent(read_counts[SCATTER], len(reads))})
    write: dict[str, Any] = {"sampleSize": {"total": Int64(len(writes)),
                                            **{c: Int64(sum(1 for s in writes if s[0] == c))
                                               for c in ("update", "delete", "findAndModify")}}}
    if writes:
        targets = [target_of(key, s[1]) for s in writes]
        counts = Counter(targets)
        without_key_single = sum(1 for s, t in zip(writes, targets) if t != SINGLE and not s[3])
        without_key_multi = sum(1 for s, t in zip(writes, targets) if t != SINGLE and s[3])
        write.update({
            "percentageOfSingleShardWrites": _percent(counts[SINGLE], len(writes)),
            "percentageOfMultiShardWrites": _percent(counts[MULTI], len(writes)),
            "percentageOfScatterGatherWrites": _percent(counts[SCATTER], len(writes)),
            "percentageOfShardKeyUpdates": _percent(sum(1 for s in writes if s[2] is not None
                                                        and _updates_key(key, s[2])), len(writes)),
            "percentageOfSingleWritesWithoutShardKey": _percent(without_key_single, len(writes)),
            "percentageOfMultiWritesWithoutShardKey": _percent(without_key_multi, len(writes))})
    return {"readDistribution": read, "writeDistribution": write}
