"""Zones: shards tagged with zone names (config.shards' `tags`), ranges of a collection's shard
key assigned to a zone (config.tags), and the layout the balancer honours: a chunk inside a
zone's range belongs on a shard of that zone (docs/design/sharding.md, "Zones")."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

from bson.min_key import MinKey
from bson.objectid import ObjectId

from ..commands.fields import missing_field
from ..errors import CommandError, ErrorCode
from .admin import _ns
from .chunks import Chunk, ChunkMap, range_text
from .state import Router


@dataclass(frozen=True)
class Zone:
    """One zone range in key bytes, with the shards tagged with its zone."""

    low: bytes
    high: bytes
    name: str
    shards: frozenset[str]


def _wrong_type(name: str, value: Any) -> CommandError:
    return CommandError(ErrorCode.TypeMismatch,
                        f"BSON field '{name}' is the wrong type '{type(value).__name__}', expected type 'string'")


def _shard_doc(router: Router, cmd: Mapping) -> tuple[dict, str]:
    field = next(iter(cmd))
    name = cmd[field]
    if not isinstance(name, str):
        raise _wrong_type(field, name)
    if "zone" not in cmd:
        raise missing_field(field, "zone")
    zone = cmd["zone"]
    if not isinstance(zone, str):
        raise _wrong_type(f"{field}.zone", zone)
    doc = next((s for s in router.catalog.shards() if s["_id"] == name), None)
    if doc is None:
        raise CommandError(ErrorCode.ShardNotFound, f"Shard {name} does not exist")
    return doc, zone


def add_shard_to_zone(router: Router, cmd: Mapping) -> dict:
    doc, zone = _shard_doc(router, cmd)
    tags = list(doc.get("tags") or [])
    if zone not in tags:
        router.catalog.put_shard({**doc, "tags": tags + [zone]})
    return {}


def remove_shard_from_zone(router: Router, cmd: Mapping) -> dict:
    doc, zone = _shard_doc(router, cmd)
    tags = list(doc.get("tags") or [])
    if zone not in tags:
        return {}
    others = [s for s in router.catalog.shards() if s["_id"] != doc["_id"] and zone in (s.get("tags") or [])]
    if not others and any(r["tag"] == zone for r in router.catalog.all_zone_ranges()):
        raise CommandError(ErrorCode.ZoneStillInUse, f"zone {zone} is still in use")
    router.catalog.put_shard({**doc, "tags": [t for t in tags if t != zone]})
    return {}


def _extend(cmap: ChunkMap, bound: Any, what: str) -> dict:
    """A zone bound: a prefix of the shard key, its missing fields MinKey (as mongod extends it)."""
    if not isinstance(bound, Mapping) or not bound:
        raise CommandError(ErrorCode.ShardKeyNotFound, f"{what}: {bound} is not a prefix of the shard key "
                                                       f"{cmap.key.pattern}")
    fields = list(bound)
    if fields != cmap.key.fields[:len(fields)] or any(isinstance(v, list) for v in bound.values()):
        raise CommandError(ErrorCode.ShardKeyNotFound, f"{what}: {dict(bound)} is not a prefix of the shard key "
                                                       f"{cmap.key.pattern}")
    return {f: bound[f] if f in bound else MinKey() for f in cmap.key.fields}


def update_zone_key_range(router: Router, cmd: Mapping) -> dict:
    """Assign [min, max) to a zone, or with `zone: null` remove the range that exactly matches."""
    field = next(iter(cmd))
    db, coll = _ns(cmd[field], field)
    ns = f"{db}.{coll}"
    for name in ("min", "max", "zone"):
        if name not in cmd:
            raise missing_field(field, name)
    cmap = router.chunk_map(ns, refresh=True)
    if cmap is None:
        raise CommandError(ErrorCode.NotImplemented,
                           f"zone ranges of an unsharded collection ({ns}) are not supported by the ginkgodb router")
    low, high = _extend(cmap, cmd["min"], "min"), _extend(cmap, cmd["max"], "max")
    lo, hi = cmap.key.bound(low), cmap.key.bound(high)
    if lo >= hi:
        raise CommandError(ErrorCode.FailedToParse, f"min: {range_text(low, high)} should be less than max")
    zone = cmd["zone"]
    ranges, revision = router.catalog.zone_ranges(ns)
    if zone is None:
        kept = [r for r in ranges if (cmap.key.bound(r["min"]), cmap.key.bound(r["max"])) != (lo, hi)]
        if len(kept) != len(ranges) and not router.catalog.put_zone_ranges(ns, kept, revision):
            raise CommandError(ErrorCode.ConflictingOperationInProgress, f"the zones of {ns} changed: try again")
        return {}
    if not isinstance(zone, str):
        raise _wrong_type(f"{field}.zone", zone)
    if not any(zone in (s.get("tags") or []) for s in router.catalog.shards()):
        raise CommandError(ErrorCode.ZoneNotFound, f"{zone} zone is not associated with a shard")
    for r in ranges:
        rlo, rhi = cmap.key.bound(r["min"]), cmap.key.bound(r["max"])
        if rlo < hi and lo < rhi:
            if (rlo, rhi, r["tag"]) == (lo, hi, zone):
                return {}
            raise CommandError(ErrorCode.RangeOverlapConflict,
                               f"Zone range: {range_text(low, high)} on {ns} is overlapping with existing: "
                               f"{range_text(r['min'], r['max'])} on {ns}")
    ranges.append({"_id": ObjectId(), "ns": ns, "min": low, "max": high, "tag": zone})
    if not router.catalog.put_zone_ranges(ns, ranges, revision):
        raise CommandError(ErrorCode.ConflictingOperationInProgress, f"the zones of {ns} changed: try again")
    return {}


# -- the layout the balancer honours (pure) ----------------------------------------------------------
def layout(cmap: ChunkMap, ranges: list[dict], shard_docs: list[dict]) -> list[Zone]:
    return [Zone(cmap.key.bound(r["min"]), cmap.key.bound(r["max"]), r["tag"],
                 frozenset(s["_id"] for s in shard_docs if r["tag"] in (s.get("tags") or [])))
            for r in ranges]


def boundary_points(cmap: ChunkMap, ranges: list[dict]) -> list[dict]:
    """Zone bounds falling strictly inside a chunk: the balancer splits there first, so every
    chunk lies wholly inside one zone range or outside all of them."""
    out: dict[bytes, dict] = {}
    for r in ranges:
        for bound in (r["min"], r["max"]):
            key = cmap.key.bound(bound)
            chunk = cmap.chunk_for(key)
            low, high = cmap.bounds_bytes(chunk)
            if low < key < high:
                out[key] = dict(bound)
    return [out[k] for k in sorted(out)]


def zone_of(cmap: ChunkMap, chunk: Chunk, zones: list[Zone]) -> Optional[Zone]:
    low, high = cmap.bounds_bytes(chunk)
    return next((z for z in zones if z.low <= low and high <= z.high), None)


__all__ = ["Zone", "add_shard_to_zone", "boundary_points", "layout", "remove_shard_from_zone",
           "update_zone_key_range", "zone_of"]
