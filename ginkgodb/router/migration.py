"""Moving a chunk between shards (docs/design/sharding.md, "Migration").

Clone the range to the recipient, catch up from the donor's oplog, enter the critical section
on the donor, catch up once more, commit the new owner in etcd with a major version bump, tell
both shards their versions (which ends the critical section), then delete the range on the
donor. A router reading at any moment sees each document once: until the commit every router
targets only the donor for the range; afterwards the donor refuses the old version, so routers
refresh before they read the recipient, and the donor's copy goes only after the commit.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from typing import Any

from bson.timestamp import Timestamp

from ..errors import CommandError, ErrorCode
from ..repl.etcd import EtcdError
from .admin import _ok, chunk_keys
from .chunks import Chunk, ChunkMap
from .shards import SET_VERSION
from .state import Router

CATCH_UP_ROUNDS = 5
log = logging.getLogger("ginkgodb.router.migration")
BATCH = 1000


def _newest_oplog_ts(router: Router, shard: str) -> Timestamp:
    reply = _ok(router.shards.command(shard, "local", {"find": "oplog.rs", "sort": {"$natural": -1}, "limit": 1,
                                                       "projection": {"ts": 1}}))
    docs = reply["cursor"]["firstBatch"]
    return docs[0]["ts"] if docs else Timestamp(0, 0)


def _changed_ids(router: Router, shard: str, ns: str, since: Timestamp) -> tuple[list[Any], Timestamp]:
    """`_id`s of the namespace's documents written on the donor after `since`, and the newest ts."""
    reply = _ok(router.shards.command(shard, "local", {"find": "oplog.rs", "filter": {"ts": {"$gt": since}, "ns": ns},
                                                       "projection": {"ts": 1, "o._id": 1, "o2._id": 1, "op": 1},
                                                       "batchSize": 100000}))
    ids: dict[Any, Any] = {}
    newest = since
    entries = list(reply["cursor"]["firstBatch"])
    cid = reply["cursor"]["id"]
    while cid:
        more = _ok(router.shards.command(shard, "local", {"getMore": cid, "collection": "oplog.rs"}))
        entries.extend(more["cursor"]["nextBatch"])
        cid = more["cursor"]["id"]
    for e in entries:
        newest = max(newest, e["ts"])
        ident = (e.get("o2") or {}).get("_id", (e.get("o") or {}).get("_id"))
        if ident is not None:
            ids[repr(ident)] = ident
    return list(ids.values()), newest


def _in_range(cmap: ChunkMap, chunk: Chunk, doc: Mapping) -> bool:
    low, high = cmap.bounds_bytes(chunk)
    key = cmap.key.key_of(doc)
    return low <= key < high


def _copy(router: Router, cmap: ChunkMap, chunk: Chunk, to: str, docs: list[dict]) -> None:
    db, coll = cmap.ns.split(".", 1)
    for i in range(0, len(docs), BATCH):
        part = docs[i:i + BATCH]
        updates = [{"q": {"_id": d["_id"]}, "u": d, "upsert": True} for d in part]
        _ok(router.shards.command(to, db, {"update": coll, "updates": updates, "ordered": False}))


def _catch_up(router: Router, cmap: ChunkMap, chunk: Chunk, to: str, since: Timestamp) -> tuple[Timestamp, int]:
    db, coll = cmap.ns.split(".", 1)
    ids, newest = _changed_ids(router, chunk.shard, cmap.ns, since)
    if not ids:
        return newest, 0
    reply = _ok(router.shards.command(chunk.shard, db, {"find": coll, "filter": {"_id": {"$in": ids}},
                                                        "batchSize": 100000}))
    current = {repr(d["_id"]): d for d in reply["cursor"]["firstBatch"]}
    keep = [d for d in current.values() if _in_range(cmap, chunk, d)]
    gone = [i for i in ids if repr(i) not in current or not _in_range(cmap, chunk, current[repr(i)])]
    _copy(router, cmap, chunk, to, keep)
    if gone:
        _ok(router.shards.command(to, db, {"delete": coll, "deletes": [{"q": {"_id": {"$in": gone}}, "limit": 0}]}))
    return newest, len(ids)


def move_chunk(router: Router, ns: str, chunk: Chunk, to: str) -> ChunkMap:
    """Migrate `chunk` to shard `to`; the committed map."""
    if to not in router.shard_names():
        raise CommandError(ErrorCode.ShardNotFound, f"Could not find shard {to}")
    if chunk.jumbo:
        raise CommandError(ErrorCode.OperationFailed, f"chunk [{chunk.min}, {chunk.max}) is jumbo: it cannot move")
    lease = router.catalog.lock(ns)
    if lease is None:
        raise CommandError(ErrorCode.ConflictingOperationInProgress,
                           f"another migration of {ns} is in progress")
    # the lock's lease (30 s) is renewed while the migration runs: a large chunk takes longer
    done = threading.Event()
    threading.Thread(target=_keep_alive, args=(router, lease, done), daemon=True).start()
    try:
        found = router.chunk_map_and_revision(ns, refresh=True)
        if found is None:
            raise CommandError(ErrorCode.NamespaceNotSharded, f"{ns} is not sharded")
        cmap, revision = found
        current = cmap.find_chunk(chunk.min)
        if current is None or current.max != chunk.max:
            raise CommandError(ErrorCode.ConflictingOperationInProgress, f"the chunks of {ns} changed: try again")
        chunk = current
        if chunk.shard == to:
            return cmap
        return _migrate(router, cmap, revision, chunk, to)
    finally:
        done.set()
        router.catalog.unlock(lease)


def _keep_alive(router: Router, lease: int, done: threading.Event, every: float = 10.0) -> None:
    while not done.wait(every):
        try:
            router.catalog.store.keep_alive(lease)
        except EtcdError:
            log.warning("could not renew the migration lock's lease %x", lease)


def _migrate(router: Router, cmap: ChunkMap, revision: int, chunk: Chunk, to: str) -> ChunkMap:
    db, coll = cmap.ns.split(".", 1)
    donor = chunk.shard
    # the recipient needs the collection's indexes (the shard key's at least) before documents
    indexes = _ok(router.shards.command(donor, db, {"listIndexes": coll}))["cursor"]["firstBatch"]
    specs = [{k: v for k, v in ix.items() if k != "v"} for ix in indexes if ix["name"] != "_id_"]
    if specs:
        _ok(router.shards.command(to, db, {"createIndexes": coll, "indexes": specs}))
    else:
        router.shards.command(to, db, {"create": coll})
    # the clone is not the recipient's yet: reads filter it, and etcd remembers it must go if this fails
    clone_task = router.catalog.add_range_deletion(cmap.ns, to, chunk.min, chunk.max)
    router.announce(cmap, [to], orphans=True)
    donor_task = ""
    committed = False
    try:
        since = _newest_oplog_ts(router, donor)
        _copy(router, cmap, chunk, to, chunk_keys(router, cmap, chunk, fields={}))
        for _ in range(CATCH_UP_ROUNDS):
            since, changed = _catch_up(router, cmap, chunk, to, since)
            if changed < 10:
                break
        # critical section: versioned requests for the namespace on the donor are refused (StaleConfig)
        # and routers retry; the shard answers once the requests past the check have finished, so
        # the final catch-up sees every write the donor accepted
        donor_task = router.catalog.add_range_deletion(cmap.ns, donor, chunk.min, chunk.max)
        _ok(router.shards.command(donor, "admin", {SET_VERSION: cmap.ns, "e": cmap.epoch, "t": cmap.timestamp,
                                                   "v": Timestamp(*cmap.shard_version(donor)), "critical": True,
                                                   "orphans": True}, stale_check=False))
        _catch_up(router, cmap, chunk, to, since)
        new = cmap.move(chunk, to)
        try:
            committed = router.catalog.commit_chunks(new, revision)
        except EtcdError:   # the outcome is unknown: etcd's map says
            found = router.catalog.chunk_map(cmap.ns)
            owner = found[0].find_chunk(chunk.min) if found else None
            committed = owner is not None and owner.shard == to
        if not committed:
            raise CommandError(ErrorCode.ConflictingOperationInProgress,
                               f"the chunks of {cmap.ns} changed during the migration: it was rolled back")
    except BaseException:
        if not committed:   # the donor still owns the range: drop the recipient's copy
            try:
                if donor_task:
                    router.catalog.remove_range_deletion(donor_task)
                router.announce(cmap, [donor], orphans=router.holds_orphans(cmap.ns, donor))
                _remove_copy(router, cmap, chunk, to)
                router.catalog.remove_range_deletion(clone_task)
                router.mark_orphans(cmap.ns, to, router.holds_orphans(cmap.ns, to))
            except (CommandError, EtcdError):
                log.warning("the copy of a failed migration of %s stays on %s (filtered as orphans; the range "
                            "deleter retries)", cmap.ns, to)
        raise
    router.forget(cmap.ns)
    router.catalog.remove_range_deletion(clone_task)   # the recipient owns its copy now
    router.announce(new, [to], orphans=router.holds_orphans(cmap.ns, to))
    router.announce(new, [donor])
    # the range deleter, after a delay for the queries still reading the donor with the old map
    time.sleep(router.orphan_cleanup_delay)
    _remove_copy(router, new, chunk, donor)
    router.catalog.remove_range_deletion(donor_task)
    router.mark_orphans(cmap.ns, donor, router.holds_orphans(cmap.ns, donor))
    return new


def delete_pending_ranges(router: Router) -> int:
    """The range deleter's recovery: ranges etcd lists as held without ownership (a migration that
    failed or whose router died) lose, on their shard, every document the shard does not own in
    the current map. A range whose collection is migrating (its lock is held) waits. How many
    ranges were cleaned."""
    done = 0
    for key, task in router.catalog.range_deletions():
        ns, shard = task["ns"], task["shard"]
        lease = router.catalog.lock(ns)
        if lease is None:
            continue
        try:
            cmap = router.chunk_map(ns, refresh=True)
            if cmap is not None:
                db, coll = ns.split(".", 1)
                span = Chunk(task["min"], task["max"], shard, 0, 0)
                docs = chunk_keys(router, cmap, span, fields={**dict.fromkeys(cmap.key.fields, 1), "_id": 1})
                ids = [d["_id"] for d in docs if cmap.chunk_for(cmap.key.key_of(d)).shard != shard]
                for i in range(0, len(ids), BATCH):
                    _ok(router.shards.command(shard, db, {"delete": coll, "deletes": [
                        {"q": {"_id": {"$in": ids[i:i + BATCH]}}, "limit": 0}]}))
            router.catalog.remove_range_deletion(key)
            if cmap is not None:
                router.mark_orphans(ns, shard, router.holds_orphans(ns, shard))
            done += 1
        finally:
            router.catalog.unlock(lease)
    return done


def _remove_copy(router: Router, cmap: ChunkMap, chunk: Chunk, shard: str) -> None:
    """The range deleter: the documents of `chunk`'s range on `shard` (not versioned)."""
    db, coll = cmap.ns.split(".", 1)
    on_shard = Chunk(chunk.min, chunk.max, shard, chunk.major, chunk.minor)
    ids = [d["_id"] for d in chunk_keys(router, cmap, on_shard, fields={"_id": 1})]
    for i in range(0, len(ids), BATCH):
        _ok(router.shards.command(shard, db, {"delete": coll,
                                              "deletes": [{"q": {"_id": {"$in": ids[i:i + BATCH]}}, "limit": 0}]}))
