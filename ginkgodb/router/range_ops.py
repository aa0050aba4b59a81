"""Commands that reshape a collection's chunks by range or by size: mergeChunks, moveRange,
configureCollectionBalancing, and the balancer's split of chunks grown past the chunk size.

Sizes are the documents' BSON sizes as the owning shard reads them through its shard key index
(docs/design/sharding.md, "Splitting by size"); cuts are chosen by commands/split_points.py,
the one implementation the shards' splitVector uses too.
"""
from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from bson.int64 import Int64

from ..commands.fields import missing_field
from ..commands.split_points import Entry, range_end, range_start, split_points
from ..errors import CommandError, ErrorCode
from .admin import DEFAULT_CHUNK_MB, _sharded, chunk_keys
from .chunks import Chunk, ChunkMap
from .migration import move_chunk
from .state import Router

MB = 1024 * 1024
MAX_CHUNK_MB = 1024
SIZE_FIELD = "__ginkgodb_bson_size"
log = logging.getLogger("ginkgodb.router.range_ops")


# -- chunk size -----------------------------------------------------------------------------------
def max_chunk_bytes(router: Router, ns: str) -> int:
    """The collection's chunk size: configureCollectionBalancing's, else config.settings'
    `chunksize` (MB), else 128 MB."""
    coll = router.catalog.collection(ns) or {}
    if coll.get("maxChunkSizeBytes"):
        return int(coll["maxChunkSizeBytes"])
    setting = router.catalog.setting("chunksize") or {}
    value = setting.get("value", DEFAULT_CHUNK_MB)
    mb = value if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else DEFAULT_CHUNK_MB
    return int(mb * MB)


def chunk_entries(router: Router, cmap: ChunkMap, chunk: Chunk) -> list[Entry]:
    """The chunk's documents on its shard in shard key order, as (key values, BSON size)."""
    fields: dict[str, Any] = {f: 1 for f in cmap.key.fields}
    if "_id" not in fields:
        fields["_id"] = 0
    fields[SIZE_FIELD] = {"$bsonSize": "$$ROOT"}
    out = []
    for doc in chunk_keys(router, cmap, chunk, fields=fields):
        size = int(doc.pop(SIZE_FIELD, 0) or 0)
        try:
            values = cmap.key.values(doc)
        except CommandError:   # an array in a key field (written to the shard directly): never a cut
            continue
        out.append((values, size))
    return out


def configure_collection_balancing(router: Router, cmd: Mapping) -> dict:
    """7.0's per-collection chunk size (`chunkSize` MB; 0 restores the default). There is no
    defragmentation nor auto-merger here: asking for either is 238."""
    name = next(iter(cmd))
    cmap, _ = _sharded(router, cmd[name], name)
    if cmd.get("defragmentCollection"):
        raise CommandError(ErrorCode.NotImplemented, "defragmentCollection is not supported by the ginkgodb router")
    if cmd.get("enableAutoMerger"):
        raise CommandError(ErrorCode.NotImplemented,
                           "enableAutoMerger: the ginkgodb router has no auto-merger (docs/compatibility.md, Sharding)")
    coll = router.catalog.collection(cmap.ns)
    assert coll is not None
    if "chunkSize" in cmd:
        size = cmd["chunkSize"]
        if not isinstance(size, (int, float)) or isinstance(size, bool):
            raise CommandError(ErrorCode.TypeMismatch, f"BSON field 'chunkSize' is the wrong type "
                                                       f"'{type(size).__name__}', expected type 'int'")
        if size < 0 or size > MAX_CHUNK_MB:
            raise CommandError(ErrorCode.InvalidOptions, f"Chunk size must be between 1 and {MAX_CHUNK_MB} MB")
        if size == 0:
            coll.pop("maxChunkSizeBytes", None)
        else:
            coll["maxChunkSizeBytes"] = Int64(int(size * MB))
    if "enableAutoMerger" in cmd:
        coll["enableAutoMerge"] = False
    router.catalog.put_collection(coll)
    return {}


def chunk_named(cmap: ChunkMap, cmd: Mapping, either: str, no_chunk: ErrorCode) -> Chunk:
    """The chunk a moveChunk or clearJumboFlag names: by a `find` document (not with a hashed
    key) or by its exact `bounds`; `either`: the command's message when both or neither are
    given, `no_chunk`: its code when no chunk has those bounds."""
    if ("find" in cmd) == ("bounds" in cmd):
        raise CommandError(ErrorCode.BadValue, either)
    if "find" in cmd:
        if cmap.key.is_hashed:
            raise CommandError(ErrorCode.BadValue, "find is not supported for hashed shard keys; use bounds")
        return cmap.chunk_for(cmap.key.key_of(cmd["find"]))
    bounds = cmd["bounds"]
    found = cmap.find_chunk(bounds[0]) if isinstance(bounds, list) and len(bounds) == 2 else None
    if found is None or cmap.key.bound(found.max) != cmap.key.bound(bounds[1]):
        raise CommandError(no_chunk, f"no chunk with bounds {bounds}")
    return found


# -- clearJumboFlag ---------------------------------------------------------------------------------
def clear_jumbo_flag(router: Router, cmd: Mapping) -> dict:
    """Unmark a jumbo chunk named by `bounds` or by a `find` document (the balancer will try to
    split and move it again)."""
    name = next(iter(cmd))
    cmap, revision = _sharded(router, cmd[name], name)
    chunk = chunk_named(cmap, cmd, "need to specify either find or bounds, but not both", ErrorCode.BadValue)
    if not chunk.jumbo:
        return {}
    cleared = ChunkMap(cmap.ns, cmap.key, cmap.epoch, cmap.timestamp,
                       [replace(c, jumbo=False) if c == chunk else c for c in cmap.chunks])
    if not router.catalog.commit_chunks(cleared, revision):
        raise CommandError(ErrorCode.ConflictingOperationInProgress,
                           f"the chunks of {cmap.ns} changed: try again")
    router.forget(cmap.ns)
    return {}


# -- mergeChunks ----------------------------------------------------------------------------------
def _bound(cmap: ChunkMap, value: Any, what: str) -> dict:
    """A range bound in key space: a document with exactly the shard key's fields."""
    if not isinstance(value, Mapping) or not value:
        raise CommandError(ErrorCode.InvalidOptions, f"no {what} key specified")
    if list(value) != cmap.key.fields or any(isinstance(v, list) for v in value.values()):
        raise CommandError(ErrorCode.InvalidOptions, f"{what} key {dict(value)} is not valid for shard key pattern "
                                                     f"{cmap.key.pattern}")
    return dict(value)


def merge_chunks(router: Router, cmd: Mapping) -> dict:
    """Merge the contiguous chunks of one shard that exactly fill `bounds` into one."""
    name = next(iter(cmd))
    cmap, revision = _sharded(router, cmd[name], name)
    bounds = cmd.get("bounds")
    if bounds is None:
        raise missing_field(name, "bounds")
    if not isinstance(bounds, list) or not bounds:
        raise CommandError(ErrorCode.InvalidOptions, "no bounds were specified")
    if len(bounds) != 2:
        raise CommandError(ErrorCode.InvalidOptions, "only a min and max bound may be specified")
    low, high = _bound(cmap, bounds[0], "min"), _bound(cmap, bounds[1], "max")
    if cmap.key.bound(low) >= cmap.key.bound(high):
        raise CommandError(ErrorCode.InvalidOptions, f"min {low} must be lower than max {high}")
    merged = cmap.merge(low, high)
    if merged is cmap:
        return {}
    if not router.catalog.commit_chunks(merged, revision):
        raise CommandError(ErrorCode.ConflictingOperationInProgress,
                           f"the chunks of {cmap.ns} changed during the merge: try again")
    router.forget(cmap.ns)
    router.announce(merged, [merged.chunk_for(merged.key.bound(low)).shard])
    return {}


# -- splitting helpers ----------------------------------------------------------------------------
def commit_split(router: Router, cmap: ChunkMap, revision: int, points: list[dict]) -> tuple[ChunkMap, int]:
    """`cmap` split at `points` (bounds strictly inside chunks), committed; the new map and revision."""
    new = cmap.split(points)
    if not router.catalog.commit_chunks(new, revision):
        raise CommandError(ErrorCode.ConflictingOperationInProgress,
                           f"the chunks of {cmap.ns} changed during the split: try again")
    router.forget(cmap.ns)
    router.announce(new, sorted({cmap.chunk_for(cmap.key.bound(p)).shard for p in points}))
    found = router.chunk_map_and_revision(cmap.ns, refresh=True)
    assert found is not None
    return found


# -- moveRange ------------------------------------------------------------------------------------
def move_range(router: Router, cmd: Mapping) -> dict:
    """Move [min, max) to `toShard`, splitting its chunk at min and max first (7.0). Given only
    one bound, the other is where the range reaches the chunk size (or the chunk's own end)."""
    name = next(iter(cmd))
    cmap, revision = _sharded(router, cmd[name], name)
    to = cmd.get("toShard")
    if not isinstance(to, str):
        raise missing_field(name, "toShard")
    if "min" not in cmd and "max" not in cmd:
        raise CommandError(ErrorCode.InvalidOptions, "Missing required parameter 'min' or 'max'")
    low = _bound(cmap, cmd["min"], "min") if "min" in cmd else None
    high = _bound(cmap, cmd["max"], "max") if "max" in cmd else None
    if to not in router.shard_names():
        raise CommandError(ErrorCode.ShardNotFound, f"Could not find shard {to}")
    if low is not None:
        chunk = cmap.chunk_for(cmap.key.bound(low))
    else:
        assert high is not None
        hb = cmap.key.bound(high)
        if hb <= cmap.key.bound(cmap.chunks[0].min):
            raise CommandError(ErrorCode.InvalidOptions, f"max {high} is the lowest key: the range is empty")
        chunk = cmap.chunk_for(hb)
        if cmap.key.bound(chunk.min) == hb:       # max is exclusive: the range ends the chunk below
            chunk = cmap.chunks[cmap.index_of(hb) - 1]
    if low is not None and high is not None:
        if cmap.key.bound(low) >= cmap.key.bound(high):
            raise CommandError(ErrorCode.InvalidOptions, f"min {low} must be lower than max {high}")
        if cmap.key.bound(high) > cmap.key.bound(chunk.max):
            raise CommandError(ErrorCode.InvalidOptions,
                               f"the range [{low}, {high}) is not contained in a single chunk: moveRange moves "
                               f"a part of one chunk (use mergeChunks first)")
    elif low is not None:
        part = Chunk(low, chunk.max, chunk.shard, chunk.major, chunk.minor)
        end = range_end(chunk_entries(router, cmap, part), max_chunk_bytes(router, cmap.ns))
        high = cmap.key.bound_doc(end) if end is not None else chunk.max
    else:
        assert high is not None
        part = Chunk(chunk.min, high, chunk.shard, chunk.major, chunk.minor)
        start = range_start(chunk_entries(router, cmap, part), max_chunk_bytes(router, cmap.ns))
        low = cmap.key.bound_doc(start) if start is not None else chunk.min
    assert low is not None and high is not None
    points = [p for p in (low, high) if cmap.key.bound(chunk.min) < cmap.key.bound(p) < cmap.key.bound(chunk.max)]
    if points:
        cmap, revision = commit_split(router, cmap, revision, points)
    target = cmap.find_chunk(low)
    assert target is not None
    move_chunk(router, cmap.ns, target, to, force_jumbo=bool(cmd.get("forceJumbo")))
    return {}


# -- splitting by size (the balancer's round) -------------------------------------------------------
def _shard_sizes(router: Router, cmap: ChunkMap) -> dict[str, int]:
    """Each owning shard's data size of the collection (collStats), to skip shards whose whole
    copy fits one chunk without reading their documents."""
    db, coll = cmap.ns.split(".", 1)
    out = {}
    for shard in cmap.shards():
        reply = router.shards.command(shard, db, {"collStats": coll})
        out[shard] = int(reply.get("size", 0)) if reply.get("ok") == 1.0 else 0
    return out


def split_by_size(router: Router, ns: str) -> int:
    """Split every chunk of `ns` grown past the chunk size at splitVector's points, and mark jumbo
    the ones that cannot be split (one key value holds more than the size). One commit for the
    collection; how many chunks were added."""
    found = router.chunk_map_and_revision(ns, refresh=True)
    if found is None:
        return 0
    cmap, revision = found
    limit = max_chunk_bytes(router, ns)
    big = {s for s, size in _shard_sizes(router, cmap).items() if size > limit}
    points: list[dict] = []
    jumbo: list[Chunk] = []
    for chunk in cmap.chunks:
        if chunk.shard not in big or chunk.jumbo:
            continue
        entries = chunk_entries(router, cmap, chunk)
        if sum(size for _, size in entries) <= limit:
            continue
        cuts = split_points(entries, limit)
        if cuts:
            points.extend(cmap.key.bound_doc(c) for c in cuts)
        else:
            jumbo.append(chunk)
    if not points and not jumbo:
        return 0
    new = cmap
    for chunk in jumbo:
        new = new.with_jumbo(chunk)
    if points:
        new = new.split(points)
    if not router.catalog.commit_chunks(new, revision):
        log.info("the chunks of %s changed during a split by size: the next round retries", ns)
        return 0
    router.forget(ns)
    if points:
        router.announce(new, sorted({cmap.chunk_for(cmap.key.bound(p)).shard for p in points}))
    return len(points)

