"""The cluster's metadata in etcd (docs/design/sharding.md, "etcd layout", format version 1).

DO NOT CHANGE the meaning of the keys below: a router of another release reads the same store.
A new layout takes a new FORMAT_VERSION, and a router refuses a store of a version it does not
know. Values are canonical Extended JSON, so shard key values keep their BSON types.
"""
from __future__ import annotations

import base64
import threading
import uuid
from collections.abc import Mapping
from typing import Any, Optional

from bson import json_util
from bson.json_util import CANONICAL_JSON_OPTIONS
from bson.objectid import ObjectId

from ..errors import CommandError, ErrorCode
from ..repl.etcd import EtcdClient, EtcdError, prefix_end
from .chunks import ChunkMap
from .shardkey import ShardKey

PREFIX = "/ginkgodb/sharding/"
FORMAT_VERSION = 1   # DO NOT CHANGE: bump it with a new layout
FORMAT_KEY = PREFIX + "format"
SHARDS = PREFIX + "shards/"
DATABASES = PREFIX + "databases/"
COLLECTIONS = PREFIX + "collections/"
CHUNKS = PREFIX + "chunks/"
SETTINGS = PREFIX + "settings/"
LOCKS = PREFIX + "locks/"
RANGE_DELETIONS = PREFIX + "rangedeletions/"
TAGS = PREFIX + "tags/"
CLUSTER_ID = PREFIX + "clusterid"


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _unb64(text: str) -> str:
    return base64.b64decode(text).decode()


def to_json(doc: Any) -> str:
    return json_util.dumps(doc, json_options=CANONICAL_JSON_OPTIONS)


def from_json(text: str) -> Any:
    return json_util.loads(text)


class MetadataStore(EtcdClient):
    """The etcd calls the router needs beyond a replica set's: prefix reads and compare-and-swap."""

    def read(self, key: str) -> Optional[tuple[Any, int]]:
        """(document, mod_revision) or None."""
        kvs = self._call("/v3/kv/range", {"key": _b64(key)}).get("kvs") or []
        if not kvs:
            return None
        return from_json(_unb64(kvs[0]["value"])), int(kvs[0].get("mod_revision", 0))

    def read_prefix(self, prefix: str) -> list[tuple[str, Any]]:
        kvs = self._call("/v3/kv/range", {"key": _b64(prefix), "range_end": prefix_end(prefix)}).get("kvs") or []
        return [(_unb64(kv["key"]), from_json(_unb64(kv["value"]))) for kv in kvs]

    def write(self, key: str, doc: Any, lease: int = 0) -> int:
        body: dict = {"key": _b64(key), "value": _b64(to_json(doc))}
        if lease:
            body["lease"] = str(lease)
        return int(self._call("/v3/kv/put", body)["header"]["revision"])

    def write_if(self, key: str, doc: Any, mod_revision: int, lease: int = 0) -> bool:
        """Store `doc` only if the key's mod revision is still `mod_revision` (0: it must not exist)."""
        put: dict = {"key": _b64(key), "value": _b64(to_json(doc))}
        if lease:
            put["lease"] = str(lease)
        compare = ({"key": _b64(key), "target": "MOD", "result": "EQUAL", "mod_revision": str(mod_revision)}
                   if mod_revision else
                   {"key": _b64(key), "target": "CREATE", "result": "EQUAL", "create_revision": "0"})
        reply = self._call("/v3/kv/txn", {"compare": [compare], "success": [{"request_put": put}]})
        return bool(reply.get("succeeded"))

    def remove(self, key: str) -> None:
        self._call("/v3/kv/deleterange", {"key": _b64(key)})

    def watch_prefix(self, prefix: str, on_start: Any, on_keys: Any, stop: threading.Event,
                     idle: float = 5.0) -> None:
        """`on_start()` once every key under `prefix` is watched, then `on_keys(keys)` per change."""
        self.watch_range(prefix, on_keys, stop, prefix=True, on_start=on_start, idle=idle)


class Catalog:
    """The sharding metadata: shards, databases, collections, chunk maps, settings."""

    def __init__(self, url: str) -> None:
        self.store = MetadataStore(url, timeout=5.0)
        self._held: dict[int, threading.Event] = {}
        self._held_lock = threading.Lock()
        self._check_format()

    def _check_format(self) -> None:
        found = self.store.read(FORMAT_KEY)
        if found is None:
            self.store.write_if(FORMAT_KEY, {"version": FORMAT_VERSION}, 0)
            found = self.store.read(FORMAT_KEY)
        version = found[0].get("version") if found else None
        if version != FORMAT_VERSION:
            raise RuntimeError(f"the sharding metadata in etcd has format version {version}; this router "
                               f"knows version {FORMAT_VERSION}")

    def cluster_id(self) -> Any:
        """The cluster's id (config.version's clusterId), made by the first router that asks."""
        found = self.store.read(CLUSTER_ID)
        if found is None:
            self.store.write_if(CLUSTER_ID, {"clusterId": ObjectId()}, 0)
            found = self.store.read(CLUSTER_ID)
        assert found is not None
        return found[0]["clusterId"]

    # -- shards -----------------------------------------------------------------------------------
    def shards(self) -> list[dict]:
        return sorted((doc for _, doc in self.store.read_prefix(SHARDS)), key=lambda d: d["_id"])

    def add_shard(self, doc: dict) -> bool:
        return self.store.write_if(SHARDS + doc["_id"], doc, 0)

    def put_shard(self, doc: dict) -> None:
        """Rewrite a shard's entry (`draining: true` while removeShard empties it)."""
        self.store.write(SHARDS + doc["_id"], doc)

    def remove_shard(self, name: str) -> None:
        self.store.remove(SHARDS + name)

    # -- databases --------------------------------------------------------------------------------
    def database(self, name: str) -> Optional[dict]:
        found = self.store.read(DATABASES + name)
        return found[0] if found else None

    def databases(self) -> list[dict]:
        return sorted((doc for _, doc in self.store.read_prefix(DATABASES)), key=lambda d: d["_id"])

    def create_database(self, doc: dict) -> dict:
        """Record the database unless another router did first; the stored document."""
        self.store.write_if(DATABASES + doc["_id"], doc, 0)
        stored = self.database(doc["_id"])
        assert stored is not None
        return stored

    def put_database(self, doc: dict) -> None:
        self.store.write(DATABASES + doc["_id"], doc)

    # -- collections and chunks -------------------------------------------------------------------
    def collection(self, ns: str) -> Optional[dict]:
        found = self.store.read(COLLECTIONS + ns)
        return found[0] if found else None

    def collections(self) -> list[dict]:
        return sorted((doc for _, doc in self.store.read_prefix(COLLECTIONS)), key=lambda d: d["_id"])

    def chunk_map(self, ns: str) -> Optional[tuple[ChunkMap, int]]:
        """The map and its key's mod revision (what a commit compares against)."""
        coll = self.collection(ns)
        found = self.store.read(CHUNKS + ns)
        if coll is None or found is None:
            return None
        doc, revision = found
        return ChunkMap.from_doc(ns, ShardKey(coll["key"]), doc), revision

    def create_collection(self, coll: dict, cmap: ChunkMap) -> bool:
        if not self.store.write_if(CHUNKS + coll["_id"], cmap.to_doc(), 0):
            return False
        self.store.write(COLLECTIONS + coll["_id"], coll)
        return True

    def put_collection(self, doc: dict) -> None:
        """Rewrite a sharded collection's entry (its settings: chunk size, noBalance...)."""
        self.store.write(COLLECTIONS + doc["_id"], doc)

    def commit_chunks(self, cmap: ChunkMap, revision: int) -> bool:
        """Replace the map if nobody changed it since `revision` (splits and migrations)."""
        return self.store.write_if(CHUNKS + cmap.ns, cmap.to_doc(), revision)

    def drop_collection(self, ns: str) -> None:
        """The collection's entry, chunks and zone ranges (mongod drops its config.tags too)."""
        self.store.remove(COLLECTIONS + ns)
        self.store.remove(CHUNKS + ns)
        self.store.remove(TAGS + ns)

    # -- settings ---------------------------------------------------------------------------------
    def setting(self, name: str) -> Optional[dict]:
        found = self.store.read(SETTINGS + name)
        return found[0] if found else None

    def settings(self) -> list[dict]:
        return [doc for _, doc in self.store.read_prefix(SETTINGS)]

    def put_setting(self, doc: Mapping) -> None:
        self.store.write(SETTINGS + str(doc["_id"]), dict(doc))

    # -- zones ------------------------------------------------------------------------------------
    def zone_ranges(self, ns: str) -> tuple[list[dict], int]:
        """The collection's zone ranges (config.tags documents) and the key's mod revision."""
        found = self.store.read(TAGS + ns)
        return (list(found[0]["ranges"]), found[1]) if found else ([], 0)

    def all_zone_ranges(self) -> list[dict]:
        return [r for _, doc in self.store.read_prefix(TAGS) for r in doc["ranges"]]

    def put_zone_ranges(self, ns: str, ranges: list[dict], revision: int) -> bool:
        """Replace the ranges if nobody changed them since `revision` (0: none were stored)."""
        if not ranges and revision:
            self.store.remove(TAGS + ns)
            return True
        return self.store.write_if(TAGS + ns, {"ranges": ranges}, revision)

    def drop_zone_ranges(self, ns: str) -> None:
        self.store.remove(TAGS + ns)

    # -- range deletions (orphans a shard holds until they are deleted) ------------------------------
    def add_range_deletion(self, ns: str, shard: str, low: dict, high: dict) -> str:
        key = f"{RANGE_DELETIONS}{ns}/{shard}/{uuid.uuid4().hex}"
        self.store.write(key, {"ns": ns, "shard": shard, "min": low, "max": high})
        return key

    def remove_range_deletion(self, key: str) -> None:
        self.store.remove(key)

    def range_deletions(self, ns: str = "", shard: str = "") -> list[tuple[str, dict]]:
        prefix = RANGE_DELETIONS + (f"{ns}/" if ns else "") + (f"{shard}/" if ns and shard else "")
        return self.store.read_prefix(prefix)

    # -- locks ------------------------------------------------------------------------------------
    def lock(self, name: str, ttl: int = 30) -> Optional[int]:
        """A lease holding `locks/<name>`, or None when another router holds it. The lease is
        renewed every ttl/3 until `unlock` (a long migration or resharding keeps its claim); a
        router that dies stops renewing, so the claim lapses `ttl` seconds later."""
        lease = self.store.grant(ttl)
        if not self.store.write_if(LOCKS + name, {"lease": lease}, 0, lease=lease):
            self.store.revoke(lease)
            return None
        released = threading.Event()
        with self._held_lock:
            self._held[lease] = released

        def renew() -> None:
            while not released.wait(ttl / 3):
                try:
                    if self.store.keep_alive(lease, timeout=2.0) <= 0:
                        return
                except EtcdError:   # etcd briefly unreachable: the next renewal may still be in time
                    continue
                except RuntimeError:   # the catalog was closed meanwhile
                    return
        threading.Thread(target=renew, name=f"lock-{name}", daemon=True).start()
        return lease

    def unlock(self, lease: int) -> None:
        with self._held_lock:
            released = self._held.pop(lease, None)
        if released is not None:
            released.set()
        self.store.revoke(lease)

    def close(self) -> None:
        with self._held_lock:
            held, self._held = list(self._held.values()), {}
        for released in held:    # renewals stop; the claims lapse after their TTL
            released.set()
        self.store.close()


def require_shards(catalog: Catalog) -> list[dict]:
    shards = catalog.shards()
    if not shards:
        raise CommandError(ErrorCode.ShardNotFound, "No shards found")
    return shards


__all__ = ["Catalog", "FORMAT_VERSION", "MetadataStore", "from_json", "require_shards", "to_json"]
