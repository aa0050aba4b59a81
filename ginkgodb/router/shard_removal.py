"""removeShard as mongos runs it: the first call marks the shard draining (the balancer then
moves its chunks to the other shards), later calls report what remains, and the call that
finds nothing left removes the shard from the cluster. Databases whose primary is the shard
stay until they are dropped or moved (`dbsToMove`)."""
from __future__ import annotations

from collections.abc import Mapping

from bson.int64 import Int64

from ..errors import CommandError, ErrorCode
from .state import Router

NOTE = "you need to drop or movePrimary these databases"


def _remaining(router: Router, name: str) -> tuple[int, int]:
    """(chunks, jumbo chunks) the shard still owns across the sharded collections."""
    chunks = jumbo = 0
    for coll in router.catalog.collections():
        found = router.catalog.chunk_map(coll["_id"])
        if found is None:
            continue
        for chunk in found[0].chunks:
            if chunk.shard == name:
                chunks += 1
                jumbo += int(chunk.jumbo)
    return chunks, jumbo


def remove_shard(router: Router, cmd: Mapping) -> dict:
    field = next(iter(cmd))
    name = cmd[field]
    if not isinstance(name, str):
        raise CommandError(ErrorCode.TypeMismatch,
                           f"BSON field '{field}' is the wrong type '{type(name).__name__}', expected type 'string'")
    shards = router.catalog.shards()
    doc = next((s for s in shards if s["_id"] == name), None)
    if doc is None:
        raise CommandError(ErrorCode.ShardNotFound, f"Shard {name} does not exist")
    if not any(s["_id"] != name and not s.get("draining") for s in shards):
        raise CommandError(ErrorCode.IllegalOperation, "Operation not allowed because it would remove the last shard")
    ranges = router.catalog.all_zone_ranges()
    for zone in doc.get("tags") or []:
        alone = not any(zone in (s.get("tags") or []) for s in shards if s["_id"] != name)
        if alone and any(r["tag"] == zone for r in ranges):
            raise CommandError(ErrorCode.ZoneStillInUse,
                               f"Operation not allowed because it would remove the only shard for zone {zone} "
                               f"which has a chunk range is associated with it")
    dbs = [d["_id"] for d in router.catalog.databases() if d.get("primary") == name and d["_id"] != "local"]
    if not doc.get("draining"):
        router.catalog.put_shard({**doc, "draining": True})
        return {"msg": "draining started successfully", "state": "started", "shard": name, "note": NOTE,
                "dbsToMove": dbs}
    chunks, jumbo = _remaining(router, name)
    if chunks or dbs:
        return {"msg": "draining ongoing", "state": "ongoing",
                "remaining": {"chunks": Int64(chunks), "dbs": Int64(len(dbs)), "jumboChunks": Int64(jumbo)},
                "note": NOTE, "dbsToMove": dbs}
    for key, task in router.catalog.range_deletions():
        if task.get("shard") == name:   # copies left on the shard no longer matter: it leaves the cluster
            router.catalog.remove_range_deletion(key)
    router.catalog.remove_shard(name)
    router.refresh_shards()
    return {"msg": "removeshard completed successfully", "state": "completed", "shard": name}


__all__ = ["remove_shard"]
