"""The router's cluster commands: shards, databases, shardCollection, split, moveChunk, the
balancer's switches, flushRouterConfig, and the config database as mongos shows it."""
from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Optional

import pymongo
from bson.binary import Binary, UuidRepresentation
from bson.int64 import Int64
from bson.max_key import MaxKey
from bson.min_key import MinKey
from bson.objectid import ObjectId
from bson.timestamp import Timestamp

from ..commands.fields import missing_field
from ..errors import CommandError, ErrorCode
from ..query.match import compile_filter
from ..query.projection import compile_projection
from ..query.sort import compile_sort
from .chunks import ChunkMap, initial_chunks
from .shardkey import ShardKey
from .shards import ShardReplyError, connection_uri
from .state import Router

DEFAULT_CHUNK_MB = 128


def _ns(value: Any, command: str) -> tuple[str, str]:
    if not isinstance(value, str) or "." not in value or value.startswith(".") or value.endswith("."):
        raise CommandError(ErrorCode.InvalidNamespace, f"Invalid namespace specified '{value}'")
    db, _, coll = value.partition(".")
    return db, coll


def _ok(reply: Mapping) -> dict:
    if reply.get("ok") != 1.0:
        raise ShardReplyError(reply)
    return dict(reply)


# -- shards ---------------------------------------------------------------------------------------
def add_shard(router: Router, cmd: Mapping) -> dict:
    host = cmd.get("addShard")
    if not isinstance(host, str) or not host:
        raise CommandError(ErrorCode.BadValue, "addShard requires a connection string")
    set_name, sep, members = host.partition("/")
    try:
        client: pymongo.MongoClient = pymongo.MongoClient(connection_uri(host), serverSelectionTimeoutMS=5000)
        hello = client.admin.command("hello")
        client.close()
    except pymongo.errors.PyMongoError as exc:
        raise CommandError(ErrorCode.OperationFailed,
                           f"failed to connect to {host} to add it as a shard: {exc}") from exc
    if sep and hello.get("setName") != set_name:
        raise CommandError(ErrorCode.OperationFailed,
                           f"host did not return a set name; is the replica set still initializing? {host}")
    if hello.get("msg") == "isdbgrid":
        raise CommandError(ErrorCode.OperationFailed, "can't add a mongos process as a shard")
    shards = router.catalog.shards()
    for doc in shards:
        if doc["host"] == host:
            return {"shardAdded": doc["_id"]}
    name = cmd.get("name")
    if name is None:
        name = set_name if sep else next_shard_name([d["_id"] for d in shards])
    if not isinstance(name, str) or not name:
        raise CommandError(ErrorCode.BadValue, "shard name cannot be empty")
    doc = {"_id": name, "host": host, "state": 1, "topologyTime": Timestamp(int(time.time()), 1)}
    if not router.catalog.add_shard(doc):
        raise CommandError(ErrorCode.IllegalOperation, f"A shard named {name} already exists")
    router.refresh_shards()
    return {"shardAdded": name}


def next_shard_name(names: list[str]) -> str:
    """mongod's generated shard name: one above the highest `shardNNNN` in use (never a removed
    shard's count, which a later shard could already carry)."""
    numbers = [int(n[5:]) for n in names if re.fullmatch(r"shard\d+", n)]
    return f"shard{max(numbers, default=-1) + 1:04d}"


def list_shards(router: Router, cmd: Mapping) -> dict:
    return {"shards": router.refresh_shards()}


def enable_sharding(router: Router, cmd: Mapping) -> dict:
    db = cmd.get("enableSharding", cmd.get("enablesharding"))
    if not isinstance(db, str) or not db or "." in db:
        raise CommandError(ErrorCode.InvalidNamespace, f"invalid db name specified: {db}")
    if db in ("admin", "local"):
        raise CommandError(ErrorCode.InvalidOptions, f"Enabling sharding on the {db} database is not allowed")
    wanted = cmd.get("primaryShard")
    router.primary_shard(db)
    doc = router.catalog.database(db)
    assert doc is not None
    if wanted is not None and wanted != doc["primary"]:
        if wanted not in router.shard_names():
            raise CommandError(ErrorCode.ShardNotFound, f"Shard {wanted} not found")
        raise CommandError(ErrorCode.NamespaceExists,
                           f"database {db} already exists with primary shard {doc['primary']}")
    doc["partitioned"] = True
    router.catalog.put_database(doc)
    return {}


# -- shardCollection ------------------------------------------------------------------------------
def _index_name(pattern: Mapping) -> str:
    return "_".join(f"{k}_{v}" for k, v in pattern.items())


def shard_collection(router: Router, cmd: Mapping) -> dict:
    name = next(iter(cmd))
    db, coll = _ns(cmd[name], name)
    for field in ("presplitHashedZones", "timeseries"):
        if field in cmd:
            raise CommandError(ErrorCode.NotImplemented, f"shardCollection with '{field}' is not supported by ginkgodb")
    collation = cmd.get("collation")
    if collation is not None and collation != {"locale": "simple"}:
        raise CommandError(ErrorCode.BadValue, "The collation for shardCollection must be {locale: 'simple'}, "
                                               f"but found: {collation}")
    if "key" not in cmd:
        raise missing_field(name, "key")
    key = ShardKey(cmd["key"])
    unique = bool(cmd.get("unique", False))
    if unique and key.is_hashed:
        raise CommandError(ErrorCode.InvalidOptions, "Hashed shard keys cannot be declared unique. It's possible to "
                                                     "ensure uniqueness on the hashed field by declaring an additional "
                                                     "(non-hashed) unique index on the field.")
    num = cmd.get("numInitialChunks", 0)
    if not isinstance(num, int) or isinstance(num, bool) or num < 0 or num > 8192 * max(1, len(router.shard_names())):
        raise CommandError(ErrorCode.InvalidOptions, f"numInitialChunks cannot be more than either: 8192 * number of "
                                                     f"shards; or 1 million. Got {num}")
    if num and not key.is_hashed:
        raise CommandError(ErrorCode.InvalidOptions, "numInitialChunks is only supported when the collection is empty "
                                                     "and has a hashed field in the shard key pattern")
    if db in ("admin", "local", "config"):
        raise CommandError(ErrorCode.IllegalOperation, f"can't shard {db} database")
    ns = f"{db}.{coll}"
    existing = router.catalog.collection(ns)
    if existing is not None:
        if existing["key"] == key.pattern and bool(existing.get("unique")) == unique:
            return {"collectionsharded": ns, "collectionUUID": existing["uuid"]}
        raise CommandError(ErrorCode.AlreadyInitialized,
                           f"sharding already enabled for collection {ns} with options {existing}")
    primary = router.primary_shard(db) or ""
    shards = router.placeable_shards()
    count = int(_ok(router.shards.command(primary, db, {"count": coll}))["n"])
    index: dict[str, Any] = {"key": key.index_spec(), "name": _index_name(key.pattern)}
    if unique:
        index["unique"] = True
    chunks = initial_chunks(key, shards, primary, num if count == 0 else 0) if count == 0 else \
        initial_chunks(key, [primary], primary)
    for shard in sorted({c.shard for c in chunks} | {primary}):
        reply = router.shards.command(shard, db, {"createIndexes": coll, "indexes": [index]})
        if reply.get("ok") != 1.0:
            if reply.get("code") in (int(ErrorCode.IndexOptionsConflict), int(ErrorCode.IndexKeySpecsConflict)):
                raise CommandError(ErrorCode.InvalidOptions,
                                   f"Please create an index that starts with the proposed shard key before sharding "
                                   f"the collection. {reply.get('errmsg')}")
            raise ShardReplyError(reply)
    epoch = ObjectId()
    stamp = Timestamp(int(time.time()), 1)
    cmap = ChunkMap(ns, key, epoch, stamp, chunks)
    uuid = Binary.from_uuid(__import__("uuid").uuid4(), UuidRepresentation.STANDARD)
    doc = {"_id": ns, "lastmodEpoch": epoch, "lastmod": stamp, "timestamp": stamp, "uuid": uuid,
           "key": key.pattern, "unique": unique, "noBalance": False, "epoch": epoch}
    if not router.catalog.create_collection(doc, cmap):
        raise CommandError(ErrorCode.ConflictingOperationInProgress, f"{ns} is being sharded by another router")
    dbdoc = router.catalog.database(db)
    if dbdoc is not None and not dbdoc.get("partitioned"):
        dbdoc["partitioned"] = True
        router.catalog.put_database(dbdoc)
    router.forget(ns)
    router.announce(cmap)
    return {"collectionsharded": ns, "collectionUUID": uuid}


def _sharded(router: Router, value: Any, command: str) -> tuple[ChunkMap, int]:
    db, coll = _ns(value, command)
    found = router.chunk_map_and_revision(f"{db}.{coll}", refresh=True)
    if found is None:
        raise CommandError(ErrorCode.NamespaceNotSharded, f"{db}.{coll} is not sharded")
    return found


# -- split ----------------------------------------------------------------------------------------
def _key_space(cmap: ChunkMap, doc: Mapping) -> dict:
    values = cmap.key.values(doc) if not all(f in doc for f in cmap.key.fields) else \
        [doc[f] if i != cmap.key.hashed or isinstance(doc[f], (MinKey, MaxKey)) else doc[f]
         for i, f in enumerate(cmap.key.fields)]
    return cmap.key.bound_doc(values)


def chunk_keys(router: Router, cmap: ChunkMap, chunk: Any, fields: Optional[dict] = None) -> list[dict]:
    """The documents of a chunk as its shard's index on the shard key bounds them (find with
    min/max and the index as hint: documents missing key fields are indexed as null, exactly
    as the router routes them). `fields` None: the index keys themselves (returnKey)."""
    db, coll = cmap.ns.split(".", 1)
    cmd: dict[str, Any] = {"find": coll, "min": chunk.min, "max": chunk.max, "hint": cmap.key.index_spec(),
                           "batchSize": 10000}
    if fields is None:
        cmd["returnKey"] = True
    else:
        cmd["projection"] = fields
    reply = _ok(router.shards.command(chunk.shard, db, cmd))
    out = list(reply["cursor"]["firstBatch"])
    cid = reply["cursor"]["id"]
    while cid:
        more = _ok(router.shards.command(chunk.shard, db, {"getMore": cid, "collection": coll, "batchSize": 10000}))
        out.extend(more["cursor"]["nextBatch"])
        cid = more["cursor"]["id"]
    return out


def _median(router: Router, cmap: ChunkMap, chunk: Any) -> Optional[dict]:
    """The middle key of a chunk's documents (splitVector's one point); None when the chunk
    cannot be split (every document has one key value: jumbo)."""
    keys = chunk_keys(router, cmap, chunk)
    if len(keys) < 2:
        return None
    low = cmap.key.bound(chunk.min)
    candidates = [cmap.key.bound_doc([k[f] for f in cmap.key.fields]) for k in keys[len(keys) // 2:]]
    above = [p for p in candidates if cmap.key.bound(p) > low]
    if not above:
        return None
    point = above[0]
    return point


def split(router: Router, cmd: Mapping) -> dict:
    cmap, revision = _sharded(router, cmd.get("split"), "split")
    given = [k for k in ("find", "middle", "bounds") if k in cmd]
    if len(given) != 1:
        raise CommandError(ErrorCode.BadValue, "need to specify only one of find, bounds or middle")
    if "middle" in given:
        point = _key_space(cmap, cmd["middle"]) if not cmap.key.is_hashed else dict(cmd["middle"])
        if set(point) != set(cmap.key.fields):
            raise CommandError(ErrorCode.InvalidOptions, f"split point {cmd['middle']} does not match the shard key "
                                                         f"{cmap.key.pattern}")
        chunk = cmap.chunk_for(cmap.key.bound(point))
    else:
        if "find" in given:
            chunk = cmap.chunk_for(cmap.key.key_of(cmd["find"]))
        else:
            bounds = cmd["bounds"]
            found = cmap.find_chunk(bounds[0]) if isinstance(bounds, list) and len(bounds) == 2 else None
            if found is None:
                raise CommandError(ErrorCode.InvalidOptions, f"no chunk with bounds {bounds}")
            chunk = found
        median = _median(router, cmap, chunk)
        if median is None:   # one key value: a jumbo chunk, never moved (as 7.0 marks it)
            jumbo = ChunkMap(cmap.ns, cmap.key, cmap.epoch, cmap.timestamp,
                             [replace(c, jumbo=True) if c == chunk else c for c in cmap.chunks])
            if len(chunk_keys(router, cmap, chunk, fields={"_id": 1})) > 1:
                router.catalog.commit_chunks(jumbo, revision)
                router.forget(cmap.ns)
            raise CommandError(ErrorCode.OperationFailed,
                               f"chunk [{chunk.min}, {chunk.max}) has no split point: it holds one key value")
        point = median
    new = cmap.split([point])
    if not router.catalog.commit_chunks(new, revision):
        raise CommandError(ErrorCode.ConflictingOperationInProgress,
                           f"the chunks of {cmap.ns} changed during the split: try again")
    router.forget(cmap.ns)
    router.announce(new, [chunk.shard])
    return {}


# -- balancer switches ------------------------------------------------------------------------------
def balancer_state(router: Router) -> dict:
    doc = router.catalog.setting("balancer") or {"_id": "balancer", "mode": "full", "stopped": False}
    return doc


def balancer_status(router: Router, cmd: Mapping) -> dict:
    doc = balancer_state(router)
    balancer = getattr(router, "balancer", None)
    return {"mode": doc.get("mode", "full"), "inBalancerRound": bool(balancer and balancer.in_round),
            "numBalancerRounds": Int64(balancer.rounds if balancer else 0)}


def balancer_switch(router: Router, cmd: Mapping) -> dict:
    on = next(iter(cmd)) == "balancerStart"
    router.catalog.put_setting({"_id": "balancer", "mode": "full" if on else "off", "stopped": not on})
    return {}


def flush_router_config(router: Router, cmd: Mapping) -> dict:
    target = cmd.get("flushRouterConfig")
    router.forget(target if isinstance(target, str) and "." in target else None)
    router.refresh_shards()
    return {"flushed": True}


# -- the config database ------------------------------------------------------------------------
def config_documents(router: Router, coll: str) -> Optional[list[dict]]:
    """config.<coll> as mongos shows it, from etcd; None for a collection not kept here."""
    cat = router.catalog
    if coll == "shards":
        return cat.shards()
    if coll == "databases":
        return [{"_id": d["_id"], "primary": d["primary"], "partitioned": d.get("partitioned", False),
                 "version": d["version"]} for d in cat.databases()]
    if coll == "collections":
        return [{k: v for k, v in c.items() if k != "epoch"} for c in cat.collections()]
    if coll == "chunks":
        out = []
        for c in cat.collections():
            found = cat.chunk_map(c["_id"])
            if found is None:
                continue
            cmap = found[0]
            for ch in cmap.chunks:
                doc = {"_id": ObjectId(), "uuid": c["uuid"], "min": ch.min, "max": ch.max, "shard": ch.shard,
                       "lastmod": Timestamp(ch.major, ch.minor), "history": [], "ns": c["_id"]}
                if ch.jumbo:
                    doc["jumbo"] = True
                out.append(doc)
        return out
    if coll == "settings":
        settings = {d["_id"]: d for d in cat.settings()}
        settings.setdefault("balancer", balancer_state(router))
        settings.setdefault("chunksize", {"_id": "chunksize", "value": DEFAULT_CHUNK_MB})
        return list(settings.values())
    if coll == "tags":
        return cat.all_zone_ranges()
    if coll == "version":      # mongosh's sh.status() requires it
        return [{"_id": 1, "clusterId": cat.cluster_id()}]
    if coll in ("mongos", "changelog", "locks", "actionlog"):
        return []
    return None


def config_find(router: Router, cmd: Mapping, docs: list[dict]) -> list[dict]:
    filter = cmd.get("filter") or cmd.get("query") or {}
    matcher = compile_filter(filter)
    out = [d for d in docs if matcher(d)]
    if cmd.get("sort"):
        out = compile_sort(cmd["sort"]).sort(out)
    skip = int(cmd.get("skip") or 0)
    limit = abs(int(cmd.get("limit") or 0))
    out = out[skip:skip + limit] if limit else out[skip:]
    if cmd.get("projection"):
        proj = compile_projection(cmd["projection"])
        out = [proj.apply(d) for d in out]
    return out


def _config_collections_update(router: Router, cmd: Mapping) -> dict:
    """mongosh's sh.disableBalancing / sh.enableBalancing: `$set`/`$unset` of `noBalance` on a
    config.collections entry named by `_id`; any other change of that collection is 238."""
    n = modified = 0
    for st in cmd.get("updates") or []:
        q, u = st.get("q") or {}, st.get("u") or {}
        ident = q.get("_id")
        ops = set(u) if isinstance(u, Mapping) else set()
        fields = {f for op in ops & {"$set", "$unset"} for f in u[op]}
        if not isinstance(ident, str) or not ops or not ops <= {"$set", "$unset"} or fields != {"noBalance"} \
                or st.get("multi") or st.get("upsert"):
            raise CommandError(ErrorCode.NotImplemented,
                               "updates of config.collections other than noBalance by _id are not supported by the "
                               "ginkgodb router")
        doc = router.catalog.collection(ident)
        if doc is None:
            continue
        value = bool(u["$set"]["noBalance"]) if "$set" in u else False
        n += 1
        if bool(doc.get("noBalance")) != value:
            router.catalog.put_collection({**doc, "noBalance": value})
            modified += 1
    return {"n": n, "nModified": modified}


def config_settings_write(router: Router, cmd: Mapping) -> Optional[dict]:
    """update/insert of config.settings (mongosh's sh.setBalancerState, chunk size): the
    settings documents are kept in etcd."""
    name = next(iter(cmd))
    if name == "update" and cmd.get(name) == "collections":
        return _config_collections_update(router, cmd)
    if cmd.get(name) != "settings":
        return None
    n = 0
    if name == "update":
        for st in cmd.get("updates") or []:
            q, u = st.get("q") or {}, st.get("u") or {}
            ident = q.get("_id")
            if not isinstance(ident, str):
                raise CommandError(ErrorCode.NotImplemented, "updates of config.settings must name the _id")
            doc = router.catalog.setting(ident) or ({"_id": ident} if st.get("upsert") else None)
            if doc is None:
                continue
            if any(str(k).startswith("$") for k in u):
                for op, fields in u.items():
                    if op == "$set":
                        doc.update(fields)
                    elif op == "$unset":
                        for f in fields:
                            doc.pop(f, None)
                    else:
                        raise CommandError(ErrorCode.NotImplemented, f"{op} on config.settings is not supported")
            else:
                doc = {"_id": ident, **{k: v for k, v in u.items() if k != "_id"}}
            router.catalog.put_setting(doc)
            n += 1
        return {"n": n, "nModified": n}
    if name == "insert":
        for d in cmd.get("documents") or []:
            router.catalog.put_setting(dict(d))
            n += 1
        return {"n": n}
    return None
