"""Seed 003's shard-key criteria over analyzeShardKey's metrics: monotonic-shard-key,
jumbo-chunk-risk, random-shard-key, scatter-gather-reads."""
from __future__ import annotations

from .. import thresholds as T
from ..findings import Finding
from . import rule
from .common import human


def _kc(sk) -> dict:
    return ((sk.analysis or {}).get("keyCharacteristics")) or {}


def _alternative(sk) -> str:
    first = next(iter(sk.key))
    mono = (_kc(sk).get("monotonicity") or {}).get("type") == "monotonic"
    if mono:
        return ("Use a hashed _id (seed 003: inserts spread evenly), or a compound key led by a frequently "
                "queried field that does not follow insertion order, with _id: {<field>: 1, _id: 1}.")
    if first != "_id" and sk.key[first] != "hashed":
        return (f"Use the compound key {{{first}: 1, _id: 1}} (seed 003: a frequently queried field with "
                "_id to split on) or, if no field fits, a hashed _id.")
    return "Use a hashed _id (seed 003: when no field fits)."


def _estimate(sk) -> dict:
    return {"shards": sk.shards, "distributions": sk.estimates}


@rule("monotonic-shard-key", "shard-key")
def monotonic_shard_key(sk) -> list[Finding]:
    mono = _kc(sk).get("monotonicity") or {}
    if mono.get("type") != "monotonic":
        return []
    return [Finding(
        "monotonic-shard-key", "high", sk.ns,
        f"shard key {sk.key} increases with insertion order (record-id correlation "
        f"{mono.get('recordIdCorrelationCoefficient', 0):.2f})",
        "Every insert would go to the shard holding the last chunk, which becomes the write "
        "bottleneck while chunks migrate away from it. " + _alternative(sk),
        {"monotonicity": mono}, _estimate(sk))]


@rule("jumbo-chunk-risk", "shard-key")
def jumbo_chunk_risk(sk) -> list[Finding]:
    kc = _kc(sk)
    if not kc:
        return []
    total = int(kc.get("numDocsTotal", 0)) or 1
    distinct = int(kc.get("numDistinctValues", 0))
    common = kc.get("mostCommonValues") or []
    top = int(common[0]["frequency"]) if common else 0
    top_bytes = top * int(kc.get("avgDocSizeBytes", 0))
    low = distinct < T.LOW_CARDINALITY and distinct < total
    hot = top / total >= T.HOT_VALUE_SHARE and top > 1
    jumbo = top_bytes > T.JUMBO_CHUNK_BYTES
    if not (low or hot or jumbo):
        return []
    return [Finding(
        "jumbo-chunk-risk", "high" if jumbo or (low and distinct < sk.shards * 4) else "medium", sk.ns,
        f"shard key {sk.key} has {distinct} distinct values; the most common holds {top} documents "
        f"({100 * top / total:.0f}%, about {human(top_bytes)})",
        "Documents with one key value can never be split: their chunk grows past the chunk size and "
        "cannot move between shards. " + _alternative(sk),
        {"numDistinctValues": distinct, "mostCommonValues": common[:3], "numDocsTotal": total,
         "chunkSizeBytes": T.JUMBO_CHUNK_BYTES}, _estimate(sk))]


@rule("random-shard-key", "shard-key")
def random_shard_key(sk) -> list[Finding]:
    fs = sk.field_stats
    if fs is None or fs.present < 10 or sk.key.get(next(iter(sk.key))) == "hashed":
        return []
    if max(fs.uuids, fs.digests) < T.RANDOM_ID_SHARE * fs.present:
        return []
    return [Finding(
        "random-shard-key", "medium", sk.ns,
        f"shard key {sk.key} holds random values (UUIDs or digests)",
        "Writes spread evenly, but every range or multi-document query must ask all shards and the "
        "random inserts turn into random I/O on each. " + _alternative(sk),
        {"sampledRandom": max(fs.uuids, fs.digests), "sampled": fs.present}, _estimate(sk))]


@rule("scatter-gather-reads", "shard-key")
def scatter_gather_reads(sk) -> list[Finding]:
    reads = (sk.analysis or {}).get("readDistribution") or {}
    share = reads.get("percentageOfScatterGatherReads")
    if share is None or share < T.SCATTER_SHARE:
        return []
    return [Finding(
        "scatter-gather-reads", "medium", sk.ns,
        f"{share:.0f}% of the {int(reads['sampleSize']['total'])} sampled reads would ask every shard under {sk.key}",
        "A query's latency is that of its slowest shard: choose a key the frequent queries name "
        "with equality. " + _alternative(sk),
        {"readDistribution": reads}, _estimate(sk))]
