"""reshardCollection: redistribute a sharded collection by a new shard key.

Under the collection's migration lock: the new key's index is built on every shard; a new
chunk layout is cut from the documents' new key values (quantiles over the shards, or the hashed
presplit); every document whose new owner is another shard is copied there (the copies are
orphans under the current map, filtered by readers, and listed in etcd's rangedeletions/ so a
failure or a dead router leaves them to the range deleter); the donors' oplogs are replayed; a
short critical section on the donors replays the last writes; the new map (key, bounds, epoch)
commits as one compare-and-swap; then the documents each shard no longer owns are deleted after
the orphan cleanup delay. Readers through a router see each document once throughout, as with a
migration (docs/design/sharding.md, "Resharding").
"""
from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

from bson.objectid import ObjectId
from bson.timestamp import Timestamp

from ..commands.fields import missing_field
from ..errors import CommandError, ErrorCode
from ..repl.etcd import EtcdError
from .admin import _index_name, _ok, _sharded, chunk_keys
from .chunks import Chunk, ChunkMap, initial_chunks
from .migration import BATCH, _changed_ids, _newest_oplog_ts, clean_range
from .shardkey import ShardKey
from .shards import SET_VERSION
from .state import Router

CATCH_UP_ROUNDS = 5
log = logging.getLogger("ginkgodb.router.reshard")


def _layout(router: Router, cmap: ChunkMap, new: ShardKey, shards: list[str], primary: str, num: int) -> list[Chunk]:
    """The new chunks: a hashed key's presplit, else cuts at the quantiles of the documents' new
    key values (one chunk per shard, or `num`), assigned round-robin."""
    if new.is_hashed and new.hashed == 0:
        return initial_chunks(new, shards, primary, num)
    fields = {f: 1 for f in new.fields}
    if "_id" not in fields:
        fields["_id"] = 0
    values: dict[bytes, list[Any]] = {}
    keys: list[bytes] = []
    for c in cmap.chunks:
        for d in chunk_keys(router, cmap, c, fields=fields):
            k = new.key_of(d)
            keys.append(k)
            values.setdefault(k, new.values(d))
    keys.sort()
    n = max(1, num or len(shards))
    cuts: list[bytes] = []
    for i in range(1 if keys else n, n):
        cut = keys[len(keys) * i // n]
        if (not cuts or cut > cuts[-1]) and cut > keys[0]:
            cuts.append(cut)
    bounds = [new.global_min()] + [new.bound_doc(values[c]) for c in cuts] + [new.global_max()]
    return [Chunk(bounds[i], bounds[i + 1], shards[i % len(shards)], 1, i) for i in range(len(bounds) - 1)]


class _Copier:
    """Copies each donor's documents to their new owners and replays the donors' later writes;
    remembers where each copy went, so a document deleted later is deleted from its copy only."""

    def __init__(self, router: Router, cmap: ChunkMap, new: ChunkMap) -> None:
        self.router, self.cmap, self.new = router, cmap, new
        self.db, self.coll = cmap.ns.split(".", 1)
        self.copies: dict[str, tuple[Any, str]] = {}

    def owner(self, doc: Mapping) -> str:
        return self.new.chunk_for(self.new.key.key_of(doc)).shard

    def _put(self, shard: str, docs: list[dict]) -> None:
        for i in range(0, len(docs), BATCH):
            updates = [{"q": {"_id": d["_id"]}, "u": d, "upsert": True} for d in docs[i:i + BATCH]]
            _ok(self.router.shards.command(shard, self.db, {"update": self.coll, "updates": updates,
                                                            "ordered": False}))

    def _drop(self, shard: str, ids: list[Any]) -> None:
        for i in range(0, len(ids), BATCH):
            _ok(self.router.shards.command(shard, self.db, {"delete": self.coll, "deletes": [
                {"q": {"_id": {"$in": ids[i:i + BATCH]}}, "limit": 0}]}))

    def place(self, donor: str, docs: list[dict]) -> None:
        """Copy the donor's owned documents to their new owners (moving a copy that went elsewhere)."""
        by_shard: dict[str, list[dict]] = {}
        stale: dict[str, list[Any]] = {}
        for d in docs:
            if self.cmap.chunk_for(self.cmap.key.key_of(d)).shard != donor:
                continue                  # an orphan on the donor: not its document
            to = self.owner(d)
            ident = repr(d["_id"])
            before = self.copies.get(ident)
            if before is not None and before[1] != to:
                stale.setdefault(before[1], []).append(d["_id"])
            if to != donor:
                by_shard.setdefault(to, []).append(d)
                self.copies[ident] = (d["_id"], to)
            else:
                self.copies.pop(ident, None)
        for shard, ids in stale.items():
            self._drop(shard, ids)
        for shard, part in by_shard.items():
            self._put(shard, part)

    def clone(self, donor: str) -> None:
        for chunk in self.cmap.chunks:
            if chunk.shard == donor:
                self.place(donor, chunk_keys(self.router, self.cmap, chunk, fields={}))

    def catch_up(self, donor: str, since: Timestamp) -> tuple[Timestamp, int]:
        ids, newest = _changed_ids(self.router, donor, self.cmap.ns, since)
        if not ids:
            return newest, 0
        found = _ok(self.router.shards.command(donor, self.db, {"find": self.coll, "filter": {"_id": {"$in": ids}},
                                                                "batchSize": 100000}))["cursor"]["firstBatch"]
        present = {repr(d["_id"]) for d in found}
        self.place(donor, found)
        gone: dict[str, list[Any]] = {}
        for i in ids:
            copy = self.copies.get(repr(i))
            if repr(i) not in present and copy is not None:
                gone.setdefault(copy[1], []).append(i)
                self.copies.pop(repr(i))
        for shard, part in gone.items():
            self._drop(shard, part)
        return newest, len(ids)


def reshard_collection(router: Router, cmd: Mapping) -> dict:
    name = next(iter(cmd))
    cmap, revision = _sharded(router, cmd[name], name)
    if "key" not in cmd:
        raise missing_field(name, "key")
    new_key = ShardKey(cmd["key"])
    if cmd.get("unique"):
        raise CommandError(ErrorCode.BadValue, "Resharding with unique: true is not supported")
    collation = cmd.get("collation")
    if collation is not None and collation != {"locale": "simple"}:
        raise CommandError(ErrorCode.BadValue, "The collation for reshardCollection must be {locale: 'simple'}, "
                                               f"but found: {collation}")
    for field in ("zones", "forceRedistribution", "_presetReshardedChunks", "shardDistribution"):
        if cmd.get(field):
            raise CommandError(ErrorCode.NotImplemented,
                               f"reshardCollection with '{field}' is not supported by the ginkgodb router")
    num = cmd.get("numInitialChunks", 0)
    if not isinstance(num, int) or isinstance(num, bool) or num < 0:
        raise CommandError(ErrorCode.BadValue, f"numInitialChunks must be a positive number, got {num}")
    if new_key.pattern == cmap.key.pattern:
        return {}
    if router.catalog.zone_ranges(cmap.ns)[0]:
        raise CommandError(ErrorCode.NotImplemented, "reshardCollection of a collection with zone ranges is not "
                                                     "supported by the ginkgodb router")
    lease = router.catalog.lock(cmap.ns, ttl=120)
    if lease is None:
        raise CommandError(ErrorCode.ConflictingOperationInProgress, f"a migration of {cmap.ns} is in progress")
    try:
        return _reshard(router, cmap, revision, new_key, num)
    finally:
        router.catalog.unlock(lease)


def _reshard(router: Router, cmap: ChunkMap, revision: int, new_key: ShardKey, num: int) -> dict:
    ns = cmap.ns
    db, coll = ns.split(".", 1)
    if router.catalog.range_deletions(ns):
        raise CommandError(ErrorCode.ConflictingOperationInProgress,
                           f"{ns} has ranges waiting for the range deleter: try again shortly")
    shards = router.placeable_shards()
    donors = cmap.shards()
    index = {"key": new_key.index_spec(), "name": _index_name(new_key.pattern)}
    for shard in sorted(set(shards) | set(donors)):
        reply = router.shards.command(shard, db, {"createIndexes": coll, "indexes": [index]})
        if reply.get("ok") != 1.0 and reply.get("code") not in (int(ErrorCode.IndexOptionsConflict),
                                                                 int(ErrorCode.IndexKeySpecsConflict)):
            _ok(reply)
    primary = router.primary_shard(db) or shards[0]
    epoch, stamp = ObjectId(), Timestamp(int(time.time()), 1)
    new = ChunkMap(ns, new_key, epoch, stamp, _layout(router, cmap, new_key, shards, primary, num))
    # every shard may receive copies it does not own yet: listed before the first copy
    old_span = (cmap.key.global_min(), cmap.key.global_max())
    clone_tasks = {s: router.catalog.add_range_deletion(ns, s, *old_span) for s in new.shards()}
    router.announce(cmap, sorted(clone_tasks), orphans=True)
    copier = _Copier(router, cmap, new)
    committed = False
    try:
        since = {d: _newest_oplog_ts(router, d) for d in donors}
        for d in donors:
            copier.clone(d)
        for _ in range(CATCH_UP_ROUNDS):
            changed = 0
            for d in donors:
                since[d], n = copier.catch_up(d, since[d])
                changed += n
            if changed < 10:
                break
        for d in donors:   # critical section: the donors refuse versioned requests, routers retry
            _ok(router.shards.command(d, "admin", {SET_VERSION: ns, "e": cmap.epoch, "t": cmap.timestamp,
                                                   "v": Timestamp(*cmap.shard_version(d)), "critical": True,
                                                   "orphans": True}, stale_check=False))
        for d in donors:
            copier.catch_up(d, since[d])
        new_tasks = {s: router.catalog.add_range_deletion(ns, s, new_key.global_min(), new_key.global_max())
                     for s in donors}
        try:
            committed = router.catalog.commit_chunks(new, revision)
        except EtcdError:
            found = router.catalog.chunk_map(ns)
            committed = found is not None and found[0].epoch == epoch
        if not committed:
            for key in new_tasks.values():
                router.catalog.remove_range_deletion(key)
            raise CommandError(ErrorCode.ConflictingOperationInProgress,
                               f"the chunks of {ns} changed during resharding: it was rolled back")
    except BaseException:
        if not committed:
            try:   # the old map stands: end the critical sections; the copies stay listed for the range deleter
                router.announce(cmap, donors, orphans=True)
                for shard, key in clone_tasks.items():
                    clean_range(router, key, {"ns": ns, "shard": shard, "min": old_span[0], "max": old_span[1]})
            except (CommandError, EtcdError):
                log.warning("the copies of a failed resharding of %s stay listed for the range deleter", ns)
        raise
    entry = router.catalog.collection(ns)
    assert entry is not None
    router.catalog.put_collection({**entry, "key": new_key.pattern, "epoch": epoch, "lastmodEpoch": epoch,
                                   "lastmod": stamp, "timestamp": stamp, "unique": False})
    for key in clone_tasks.values():       # the copies are owned now
        router.catalog.remove_range_deletion(key)
    router.forget(ns)
    for shard in router.shard_names():
        router.announce(new, [shard], orphans=router.holds_orphans(ns, shard))
    time.sleep(router.orphan_cleanup_delay)   # queries still reading with the old map finish
    for shard, key in new_tasks.items():
        clean_range(router, key, {"ns": ns, "shard": shard, "min": new_key.global_min(),
                                  "max": new_key.global_max()})
    return {}


__all__ = ["reshard_collection"]
