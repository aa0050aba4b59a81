"""What one router holds: the etcd catalog, the shard clients, its cached chunk maps, its
cursors, and the versioned-request loop that refreshes on StaleConfig."""
from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Optional, TypeVar

from bson.int64 import Int64
from bson.objectid import ObjectId
from bson.timestamp import Timestamp

from ..errors import CommandError, ErrorCode
from ..repl.etcd import EtcdError
from .catalog import CHUNKS, COLLECTIONS, DATABASES, PREFIX, Catalog
from .chunks import ChunkMap
from .shards import SET_VERSION, Shards, StaleConfig, version_field

log = logging.getLogger("ginkgodb.router")
T = TypeVar("T")
STALE_RETRIES = 10
CURSOR_TIMEOUT = 600.0
#: seconds a migration's donor keeps the moved range before the range deleter (mongod's
#: orphanCleanupDelaySecs, 900 there: a query that started on the old map still reads it)
ORPHAN_CLEANUP_DELAY = 2.0
#: seconds a request for a database waits for its movePrimary before it fails (LockBusy)
MOVE_PRIMARY_WAIT = 60.0
#: seconds between attempts to watch etcd again after the watch failed (caches off meanwhile)
WATCH_RETRY = 0.5


@dataclass
class RouterCursor:
    """A merged cursor the client pages through with getMore."""

    ns: str
    stream: Any                     # iterator of documents
    parts: list = field(default_factory=list)   # ShardCursors (killed with the cursor)
    last_used: float = field(default_factory=time.monotonic)


class Router:
    def __init__(self, etcd_url: str, *, balancer_interval: float = 10.0,
                 orphan_cleanup_delay: float = ORPHAN_CLEANUP_DELAY) -> None:
        self.orphan_cleanup_delay = orphan_cleanup_delay
        self.catalog = Catalog(etcd_url)
        self.shards = Shards()
        self.balancer_interval = balancer_interval
        self._maps: dict[str, Optional[tuple[ChunkMap, int]]] = {}
        self._maps_lock = threading.Lock()
        self.cursors: dict[int, RouterCursor] = {}
        self._cursor_ids = itertools.count(int(time.time()) << 20)
        self._cursor_lock = threading.Lock()
        self.connection_ids = itertools.count(1)
        self.started = time.time()
        # the databases' entries (primary shards) and the unsharded verdicts of chunk_map are
        # cached only while the watch of etcd is live; each change it reports, and each time it
        # starts or fails, bumps the generation, and a value read under an older one is not kept
        self._databases: dict[str, dict] = {}
        self._watch_live = False
        self._generation = 0
        self._stop_watch = threading.Event()
        self.refresh_shards()
        self._watcher = threading.Thread(target=self._watch, name="router-etcd-watch", daemon=True)
        self._watcher.start()

    # -- the metadata cache ---------------------------------------------------------------------
    def _watch(self) -> None:
        while not self._stop_watch.is_set():
            try:
                self.catalog.store.watch_prefix(PREFIX, self._watch_started, self._changed, self._stop_watch)
            except EtcdError as exc:
                log.warning("the watch of etcd stopped (%s): metadata is read from etcd until it is back", exc)
            except Exception:   # whatever ends it, the caches must not outlive the watch
                log.exception("the watch of etcd failed: metadata is read from etcd until it is back")
            self._invalidate(live=False)
            self._stop_watch.wait(WATCH_RETRY)

    def _watch_started(self) -> None:
        self._invalidate(live=True)

    def _invalidate(self, live: bool) -> None:
        with self._maps_lock:
            self._watch_live = live
            self._generation += 1
            self._databases.clear()
            self._maps = {ns: found for ns, found in self._maps.items() if found is not None}

    def _changed(self, keys: list[str]) -> None:
        """etcd reports changed keys: drop what this router cached of them."""
        with self._maps_lock:
            for key in keys:
                if key.startswith(DATABASES):
                    self._databases.pop(key[len(DATABASES):], None)
                elif key.startswith((COLLECTIONS, CHUNKS)):
                    self._maps.pop(key[len(COLLECTIONS if key.startswith(COLLECTIONS) else CHUNKS):], None)
                else:
                    continue
                self._generation += 1

    def _database(self, db: str) -> Optional[dict]:
        """The database's entry: cached while the watch is live, else read from etcd."""
        with self._maps_lock:
            doc = self._databases.get(db)
            generation = self._generation
        if doc is not None:
            return doc
        doc = self.catalog.database(db)
        with self._maps_lock:
            if doc is not None and self._watch_live and self._generation == generation:
                self._databases[db] = doc
        return doc

    # -- shards -----------------------------------------------------------------------------------
    def refresh_shards(self) -> list[dict]:
        shards = self.catalog.shards()
        for doc in shards:
            self.shards.register(doc["_id"], doc["host"])
        names = {doc["_id"] for doc in shards}
        for gone in set(self.shards.known()) - names:   # removed by removeShard
            self.shards.unregister(gone)
        return shards

    def placeable_shards(self) -> list[str]:
        """Shards that may receive data: every shard but those removeShard is draining."""
        return [d["_id"] for d in self.refresh_shards() if not d.get("draining")]

    def shard_names(self) -> list[str]:
        names = self.shards.known()
        if not names:
            names = [d["_id"] for d in self.refresh_shards()]
        return names

    # -- databases --------------------------------------------------------------------------------
    def primary_shard(self, db: str, create: bool = True) -> Optional[str]:
        """The database's primary shard; a database used for the first time gets the shard with
        the fewest databases (as mongos picks the least-loaded one). While a movePrimary of the
        database holds it (`movePrimary.until` in its entry, a time the mover keeps ahead), the
        call waits: requests for its unsharded collections go to the new primary afterwards."""
        doc = self._database(db)
        deadline = time.monotonic() + MOVE_PRIMARY_WAIT
        while doc is not None and float((doc.get("movePrimary") or {}).get("until", 0)) > time.time():
            if time.monotonic() > deadline:
                raise CommandError(ErrorCode.LockBusy, f"a movePrimary of database {db} is in progress")
            time.sleep(0.05)
            doc = self.catalog.database(db)
        if doc is None:
            if not create:
                return None
            shards = self.refresh_shards()
            if not shards:
                raise CommandError(ErrorCode.ShardNotFound, "No shards found")
            counts = {s["_id"]: 0 for s in shards if not s.get("draining")} or {s["_id"]: 0 for s in shards}
            for d in self.catalog.databases():
                if d.get("primary") in counts:
                    counts[d["primary"]] += 1
            primary = min(counts, key=lambda s: (counts[s], s))
            doc = self.catalog.create_database({
                "_id": db, "primary": primary, "partitioned": False,
                "version": {"uuid": ObjectId(), "timestamp": Timestamp(int(time.time()), 1), "lastMod": 1}})
        return str(doc["primary"])

    # -- chunk maps -------------------------------------------------------------------------------
    def chunk_map(self, ns: str, refresh: bool = False) -> Optional[ChunkMap]:
        """The cached map of a sharded collection (None: unsharded)."""
        found = self.chunk_map_and_revision(ns, refresh)
        return found[0] if found else None

    def chunk_map_and_revision(self, ns: str, refresh: bool = False) -> Optional[tuple[ChunkMap, int]]:
        """A sharded collection's map stays cached until etcd reports a change or a shard answers
        StaleConfig; the verdict "unsharded" only while the watch is live (no shard would
        correct it: the database's primary shard answers unversioned requests)."""
        with self._maps_lock:
            if not refresh and ns in self._maps:
                return self._maps[ns]
            generation = self._generation
        found = self.catalog.chunk_map(ns)
        with self._maps_lock:
            if self._generation == generation and (found is not None or self._watch_live):
                self._maps[ns] = found
        return found

    def forget(self, ns: Optional[str] = None) -> None:
        with self._maps_lock:
            if ns is None:
                self._maps.clear()
            else:
                self._maps.pop(ns, None)

    def versioned(self, cmd: Mapping, cmap: Optional[ChunkMap], shard: str, no_orphans: bool = False) -> dict:
        """`cmd` with the shard version of `cmap` for `shard` (unchanged when unsharded);
        `no_orphans`: the shard must refuse it (StaleConfig, `orphans`) while it holds orphans."""
        out = dict(cmd)
        if cmap is not None:
            out["shardVersion"] = version_field(cmap.epoch, cmap.timestamp, cmap.shard_version(shard))
            if no_orphans:
                out["shardVersion"]["noOrphans"] = True
        return out

    def with_fresh_map(self, ns: str, attempt: Callable[[Optional[ChunkMap]], T]) -> T:
        """Run `attempt(map)`; on StaleConfig reload the map from etcd and try again (backing off,
        at most STALE_RETRIES times: a migration's critical section is short)."""
        delay = 0.05
        cmap = self.chunk_map(ns)
        for _ in range(STALE_RETRIES):
            try:
                return attempt(cmap)
            except StaleConfig as exc:
                cmap = self.chunk_map(ns, refresh=True)
                if exc.reply.get("unknown") and cmap is not None and exc.shard:
                    self.announce(cmap, [exc.shard], orphans=self.holds_orphans(ns, exc.shard))
                    continue
                time.sleep(delay)
                delay = min(delay * 2, 0.5)
        try:
            return attempt(cmap)
        except StaleConfig as exc:
            raise CommandError(ErrorCode.StaleConfig, str(exc.reply.get("errmsg", "stale config"))) from exc

    def announce(self, cmap: ChunkMap, shards: Optional[list[str]] = None, critical: bool = False,
                 orphans: Optional[bool] = None) -> None:
        """Tell shards their version of `cmap` (what they check versioned requests against)."""
        for shard in shards if shards is not None else self.shard_names():
            cmd: dict[str, Any] = {SET_VERSION: cmap.ns, "e": cmap.epoch, "t": cmap.timestamp,
                                   "v": Timestamp(*cmap.shard_version(shard)), "critical": critical}
            if orphans is not None:
                cmd["orphans"] = orphans
            reply = self.shards.command(shard, "admin", cmd, stale_check=False)
            if reply.get("ok") != 1.0:
                raise CommandError(ErrorCode.OperationFailed,
                                   f"shard {shard} refused its version: {reply.get('errmsg')}")

    def mark_orphans(self, ns: str, shard: str, orphans: bool) -> None:
        """Say whether `shard` holds documents of chunks it does not own (its version unchanged)."""
        self.shards.command(shard, "admin", {SET_VERSION: ns, "orphans": orphans}, stale_check=False)

    def holds_orphans(self, ns: str, shard: str) -> bool:
        return bool(self.catalog.range_deletions(ns, shard))

    def forget_on_shards(self, ns: str) -> None:
        for shard in self.shard_names():
            self.shards.command(shard, "admin", {SET_VERSION: ns, "unset": True}, stale_check=False)

    # -- cursors ----------------------------------------------------------------------------------
    def open_cursor(self, cursor: RouterCursor) -> Int64:
        now = time.monotonic()
        idle = [cid for cid, c in list(self.cursors.items()) if now - c.last_used > CURSOR_TIMEOUT]
        for cid in idle:   # mongod's cursorTimeoutMillis: 10 minutes
            self.close_cursor(cid)
        with self._cursor_lock:
            cid = next(self._cursor_ids)
            self.cursors[cid] = cursor
        return Int64(cid)

    def take_cursor(self, cid: int) -> Optional[RouterCursor]:
        with self._cursor_lock:
            return self.cursors.get(int(cid))

    def close_cursor(self, cid: int) -> bool:
        with self._cursor_lock:
            cursor = self.cursors.pop(int(cid), None)
        if cursor is None:
            return False
        for part in cursor.parts:
            part.kill()
        return True

    def close(self) -> None:
        self._stop_watch.set()
        for cid in list(self.cursors):
            self.close_cursor(cid)
        self.shards.close()
        self.catalog.close()
