"""`--shard-key ns:key`: analyzeShardKey's metrics and an estimate of how data and inserts
would spread over N shards under the candidate, under seed 003's compound key
`{field: 1, _id: 1}` and under a hashed `_id`.

The estimate simulates the balancer on the sampled key values: ranged chunks split only
between distinct key values (so one frequent value stays on one shard: a jumbo chunk), a
compound key with `_id` splits anywhere, a hashed key spreads evenly. Inserts follow the data
unless the key is monotonic, when every new document lands in the last chunk.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional

from bson import encode as bson_encode

from . import thresholds as T


@dataclass
class ShardKeyFacts:
    ns: str
    key: dict
    shards: int
    analysis: Optional[dict] = None        # analyzeShardKey's reply (None: refused, see error)
    error: Optional[str] = None
    field_stats: Any = None                 # the first key field's FieldStats in the sample
    estimates: list[dict] = field(default_factory=list)


def parse(spec: str) -> tuple[str, dict]:
    """`db.coll:field[,field2]`, `db.coll:field=hashed` or `db.coll:{"a": 1}`."""
    ns, sep, rest = spec.partition(":")
    if not sep or "." not in ns or not rest:
        raise ValueError(f"--shard-key {spec!r}: expected <db>.<collection>:<field>[,<field>...]")
    if rest.lstrip().startswith("{"):
        return ns, json.loads(rest)
    key: dict[str, Any] = {}
    for part in rest.split(","):
        name, _, kind = part.strip().partition("=")
        key[name] = "hashed" if kind == "hashed" else 1
    return ns, key


def _value(doc: dict, path: str) -> Any:
    cur: Any = doc
    for p in path.split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(p)
    return cur


def _ranged_shares(values: list[bytes], shards: int) -> list[float]:
    """Data share per shard when chunks split only between distinct values."""
    n = len(values)
    if not n:
        return [0.0] * shards
    groups: list[int] = []
    last = None
    for v in sorted(values):
        if v == last:
            groups[-1] += 1
        else:
            groups.append(1)
            last = v
    shares = [0] * shards
    target = n / shards
    shard = 0
    for g in groups:
        if shares[shard] and shares[shard] + g / 2 > target and shard < shards - 1:
            shard += 1
        shares[shard] += g
    return [s / n for s in shares]


def estimate(sample: list[dict], key: dict, monotonic: bool, shards: int) -> list[dict]:
    """Per-shard shares of data and inserts for the candidate and the seed's alternatives."""
    first = next(iter(key))
    out = []
    hashed = key.get(first) == "hashed"
    even = [round(1 / shards, 4)] * shards
    if hashed:
        out.append({"key": key, "data": even, "inserts": even, "note": "hashed: even, range queries scatter"})
    else:
        enc = [bson_encode({"v": [_value(d, f) for f in key]}) for d in sample]
        data = [round(s, 4) for s in _ranged_shares(enc, shards)]
        inserts = [0.0] * (shards - 1) + [1.0] if monotonic else data
        out.append({"key": key, "data": data, "inserts": inserts,
                    "note": "candidate" + (": monotonic, every insert goes to the last shard" if monotonic else "")})
    if first != "_id" and not hashed:
        compound = {first: 1, "_id": 1}
        out.append({"key": compound, "data": even, "inserts": [0.0] * (shards - 1) + [1.0] if monotonic else even,
                    "note": "seed 003's compound key: chunks split within one value"})
    out.append({"key": {"_id": "hashed"}, "data": even, "inserts": even,
                "note": "hashed _id: even reads and writes, every multi-document query is scatter-gather"})
    return out


def analyse(client: Any, ns: str, key: dict, sample: list[dict], shards: int = T.DEFAULT_SHARDS,
            sample_size: Optional[int] = None) -> ShardKeyFacts:
    facts = ShardKeyFacts(ns, key, shards)
    cmd: dict[str, Any] = {"analyzeShardKey": ns, "key": key}
    if sample_size:
        cmd["sampleSize"] = sample_size
    try:
        reply = client.admin.command(cmd)
        facts.analysis = {k: v for k, v in reply.items() if k not in ("ok", "$clusterTime", "operationTime")}
    except Exception as exc:
        facts.error = str(exc).splitlines()[0][:200]
    mono = ((facts.analysis or {}).get("keyCharacteristics") or {}).get("monotonicity", {}).get("type") == "monotonic"
    facts.estimates = estimate(sample, key, mono, shards)
    return facts
