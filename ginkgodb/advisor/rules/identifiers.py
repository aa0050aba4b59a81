"""Rules on identifiers: objectid-as-string, random-id."""
from __future__ import annotations

from .. import thresholds as T
from ..findings import Finding
from . import rule
from .common import human

#: a 24-hex string costs 4 (length) + 24 + 1 (NUL) bytes, an ObjectId 12
STRING_OID_BYTES, OID_BYTES = 29, 12


@rule("objectid-as-string")
def objectid_as_string(cf) -> list[Finding]:
    out = []
    for fs in cf.fields.values():
        if fs.strings < 10 or fs.hex24 < T.HEX24_SHARE * fs.strings:
            continue
        saved = STRING_OID_BYTES - OID_BYTES
        indexed = sum(1 for ix in cf.indexes if fs.path in ix.get("key", {}))
        docs = cf.count * fs.present / max(len(cf.sample), 1)
        out.append(Finding(
            "objectid-as-string", "medium" if fs.path == "_id" or indexed else "low", cf.ns,
            f"'{fs.path}' holds ObjectIds as 24-character hex strings ({fs.hex24} of {fs.strings} sampled)",
            "Store them as ObjectId: 12 bytes instead of 29, compared as binary, and their creation "
            "time readable with getTimestamp().",
            {"sampledHexStrings": fs.hex24, "indexesOnField": indexed},
            {"bytesSavedPerValue": saved, "dataBytesSaved": int(docs * saved),
             "indexBytesSaved": int(docs * saved * indexed), "dataBytesSavedText": human(docs * saved)}))
    return out


@rule("random-id")
def random_id(cf) -> list[Finding]:
    fs = cf.fields.get("_id")
    if fs is None or fs.present < 10:
        return []
    random_ = max(fs.uuids, fs.digests)
    if random_ < T.RANDOM_ID_SHARE * fs.present:
        return []
    kind = "UUID" if fs.uuids >= fs.digests else "MD5/SHA digest"
    return [Finding(
        "random-id", "medium", cf.ns,
        f"_id values are random {kind}s ({random_} of {fs.present} sampled)",
        "Random keys land anywhere in the _id B-tree, so inserts touch and rebalance pages all over "
        "it; use ObjectId (or another increasing key) as _id and keep the random value in an indexed field.",
        {"sampledRandom": random_, "sampled": fs.present, "kind": kind, "avgIdBytes": int(fs.avg_bytes)})]
