"""refineCollectionShardKey: extend a sharded collection's key with suffix fields (7.0).

The new key must start with the current one, and every shard owning chunks must already have
an index that supports it (the router reads ranges through that index: migrations, splits). Chunk
bounds are extended with MinKey for the new fields (MaxKey for the global maximum), so every
document keeps its chunk; the collection gets a new epoch, so routers and shards holding the old
map answer StaleConfig and refresh.
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from bson.max_key import MaxKey
from bson.min_key import MinKey
from bson.objectid import ObjectId
from bson.timestamp import Timestamp

from ..commands.fields import missing_field
from ..errors import CommandError, ErrorCode
from .admin import _ok, _sharded
from .chunks import ChunkMap
from .shardkey import ShardKey
from .state import Router


def _same_direction(a: Any, b: Any) -> bool:
    if a == "hashed" or b == "hashed":
        return a == b
    return isinstance(a, (int, float)) and isinstance(b, (int, float)) and a == b


def _supports(index: Mapping, key: ShardKey) -> bool:
    """An index the router can read the new key's ranges through: it starts with the key's
    fields in the same directions and holds every document (not sparse, not partial)."""
    fields = list(index["key"].items())
    if len(fields) < len(key.fields) or index.get("sparse") or "partialFilterExpression" in index:
        return False
    collation = index.get("collation")
    if collation and collation.get("locale") != "simple":
        return False
    return all(f == name and _same_direction(v, key.pattern[name])
               for (f, v), name in zip(fields, key.fields))


def _extend(bound: dict, new: ShardKey, old: ShardKey) -> dict:
    top = all(isinstance(bound[f], MaxKey) for f in old.fields)
    return {f: bound[f] if f in bound else (MaxKey() if top else MinKey()) for f in new.fields}


def refine_collection_shard_key(router: Router, cmd: Mapping) -> dict:
    name = next(iter(cmd))
    cmap, revision = _sharded(router, cmd[name], name)
    if "key" not in cmd:
        raise missing_field(name, "key")
    new = ShardKey(cmd["key"])
    old = cmap.key
    if new.fields[:len(old.fields)] != old.fields or any(new.pattern[f] != old.pattern[f] for f in old.fields):
        raise CommandError(ErrorCode.InvalidOptions,
                           f"refineCollectionShardKey: new shard key {new.pattern} does not extend the current shard "
                           f"key {old.pattern}")
    if new.pattern == old.pattern:
        return {}
    db, coll = cmap.ns.split(".", 1)
    for shard in cmap.shards():
        indexes = _ok(router.shards.command(shard, db, {"listIndexes": coll}))["cursor"]["firstBatch"]
        if not any(_supports(ix, new) for ix in indexes):
            raise CommandError(ErrorCode.InvalidOptions,
                               "Please create an index that starts with the proposed shard key before sharding "
                               "the collection")
    lease = router.catalog.lock(cmap.ns)
    if lease is None:
        raise CommandError(ErrorCode.ConflictingOperationInProgress, f"a migration of {cmap.ns} is in progress")
    try:
        if router.catalog.range_deletions(cmap.ns):
            raise CommandError(ErrorCode.ConflictingOperationInProgress,
                               f"{cmap.ns} has ranges waiting for the range deleter: try again shortly")
        epoch, stamp = ObjectId(), Timestamp(int(time.time()), 1)
        chunks = [replace(c, min=_extend(c.min, new, old), max=_extend(c.max, new, old)) for c in cmap.chunks]
        refined = ChunkMap(cmap.ns, new, epoch, stamp, chunks)
        # the chunks first: a router reading between the two writes parses the extended bounds with
        # the old key (its fields are a prefix), never the old bounds with the new key
        if not router.catalog.commit_chunks(refined, revision):
            raise CommandError(ErrorCode.ConflictingOperationInProgress,
                               f"the chunks of {cmap.ns} changed during the refine: try again")
        doc = router.catalog.collection(cmap.ns)
        assert doc is not None
        router.catalog.put_collection({**doc, "key": new.pattern, "epoch": epoch, "lastmodEpoch": epoch,
                                       "lastmod": stamp, "timestamp": stamp})
    finally:
        router.catalog.unlock(lease)
    router.forget(cmap.ns)
    router.announce(refined)
    return {}


__all__ = ["refine_collection_shard_key"]
