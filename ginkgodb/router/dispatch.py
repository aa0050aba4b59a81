"""The router's commands: what mongos answers itself, what it routes, what it forwards whole to
a database's primary shard, and what it refuses (238) because routing it is not built.

`dispatch(router, cmd)` never raises: errors become mongod-shaped error replies.
"""
from __future__ import annotations

import datetime
import logging
import os
import socket
from collections.abc import Callable, Mapping
from typing import Any, Optional

from bson.int64 import Int64
from bson.objectid import ObjectId
from bson.raw_bson import RawBSONDocument
from bson.timestamp import Timestamp

from ..commands.fields import missing_field
from ..errors import CommandError, ErrorCode
from ..limits import MAX_BSON_OBJECT_SIZE, MAX_MESSAGE_SIZE, MAX_WRITE_BATCH_SIZE
from ..query.pipeline import PipelineContext, run_pipeline
from ..version import MONGODB_VERSION, __version__
from . import admin, balancer, crud, move_primary, range_ops, refine, reshard, shard_removal, transactions, zones
from .migration import move_chunk
from .shards import ShardReplyError, StaleConfig
from .state import Router
from .targeting import shards_of, target

log = logging.getLogger("ginkgodb.router")
Handler = Callable[[Router, Mapping], dict]
HANDLERS: dict[str, Handler] = {}
PROCESS_ID = ObjectId()
NOT_BUILT = "is not supported by the ginkgodb router (docs/compatibility.md, Sharding)"
REFUSED = frozenset({"mapReduce", "analyzeShardKey"})
#: shard-side commands mongos does not have (run them on the shard: commands/sharding_shard.py)
SHARD_ONLY = frozenset({"checkShardingIndex", "cleanupOrphaned"})
#: collection commands that go to every shard of a sharded collection (the plan cache's and index
#: filters' too, as mongos sends them: each shard plans its own part)
BROADCAST = frozenset({"createIndexes", "dropIndexes", "collMod", "planCacheClear", "planCacheSetFilter",
                       "planCacheClearFilters"})
#: collection commands answered by one shard of a sharded collection (the primary holds the catalog
#: entry; index filters are set on every shard alike, so one shard's list is the cluster's)
ONE_SHARD = frozenset({"listIndexes", "planCacheListFilters"})


def handles(*names: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        for n in names:
            HANDLERS[n] = fn
        return fn
    return register


# -- handshake and diagnostics --------------------------------------------------------------------
@handles("hello", "isMaster", "ismaster")
def _hello(router: Router, cmd: Mapping) -> dict:
    reply: dict[str, Any] = {"isWritablePrimary" if next(iter(cmd)) == "hello" else "ismaster": True,
                             "msg": "isdbgrid", "maxBsonObjectSize": MAX_BSON_OBJECT_SIZE,
                             "maxMessageSizeBytes": MAX_MESSAGE_SIZE, "maxWriteBatchSize": MAX_WRITE_BATCH_SIZE,
                             "localTime": datetime.datetime.now(datetime.UTC).replace(tzinfo=None),
                             "logicalSessionTimeoutMinutes": 30, "connectionId": next(router.connection_ids),
                             "maxWireVersion": 21, "minWireVersion": 0, "readOnly": False}
    if cmd.get("helloOk"):
        reply["helloOk"] = True
    return reply


@handles("ping")
def _ping(router: Router, cmd: Mapping) -> dict:
    return {}


@handles("buildInfo", "buildinfo")
def _build_info(router: Router, cmd: Mapping) -> dict:
    parts = [int(p) for p in MONGODB_VERSION.split(".")[:3]]
    return {"version": MONGODB_VERSION, "gitVersion": f"ginkgodb-{__version__}", "modules": [],
            "versionArray": parts + [0], "bits": 64, "debug": False, "maxBsonObjectSize": MAX_BSON_OBJECT_SIZE,
            "javascriptEngine": "none", "storageEngines": [], "allocator": "system", "openssl": {},
            "buildEnvironment": {}, "sysInfo": "deprecated"}


@handles("getCmdLineOpts")
def _cmd_line(router: Router, cmd: Mapping) -> dict:
    return {"argv": ["ginkgodb", "router"], "parsed": {"sharding": {"configDB": router.catalog.store.url}}}


@handles("serverStatus")
def _server_status(router: Router, cmd: Mapping) -> dict:
    import time
    return {"host": socket.gethostname(), "version": MONGODB_VERSION, "process": "mongos", "pid": Int64(os.getpid()),
            "uptime": float(int(time.time() - router.started)), "localTime": datetime.datetime.utcnow(),
            "sharding": {"configsvrConnectionString": router.catalog.store.url}}


@handles("getLog")
def _get_log(router: Router, cmd: Mapping) -> dict:
    if cmd.get("getLog") == "*":
        return {"names": ["startupWarnings"]}
    return {"totalLinesWritten": 0, "log": []}


@handles("connectionStatus")
def _connection_status(router: Router, cmd: Mapping) -> dict:
    return {"authInfo": {"authenticatedUsers": [], "authenticatedUserRoles": []}}


@handles("whatsmyuri")
def _whatsmyuri(router: Router, cmd: Mapping) -> dict:
    return {"you": "127.0.0.1:0"}


@handles("endSessions", "refreshSessions", "killSessions", "killAllSessions")
def _sessions(router: Router, cmd: Mapping) -> dict:
    return {}


@handles("listDatabases")
def _list_databases(router: Router, cmd: Mapping) -> dict:
    sizes: dict[str, int] = {}
    for shard in router.shard_names():
        reply = router.shards.command(shard, "admin", {"listDatabases": 1, **({"filter": cmd["filter"]}
                                                                                if "filter" in cmd else {})})
        for d in reply.get("databases", []):
            if d["name"] in ("local", "admin", "config"):
                continue
            sizes[d["name"]] = sizes.get(d["name"], 0) + int(d.get("sizeOnDisk", 0))
    dbs = [{"name": n, "sizeOnDisk": Int64(s), "empty": s == 0} for n, s in sorted(sizes.items())]
    if cmd.get("nameOnly"):
        dbs = [{"name": d["name"]} for d in dbs]
    return {"databases": dbs, "totalSize": Int64(sum(sizes.values()))}


# -- cluster administration -----------------------------------------------------------------------
HANDLERS.update({"addShard": admin.add_shard, "addshard": admin.add_shard, "listShards": admin.list_shards,
                 "listshards": admin.list_shards, "enableSharding": admin.enable_sharding,
                 "enablesharding": admin.enable_sharding, "shardCollection": admin.shard_collection,
                 "shardcollection": admin.shard_collection, "split": admin.split,
                 "balancerStatus": admin.balancer_status, "balancerStart": admin.balancer_switch,
                 "balancerStop": admin.balancer_switch, "flushRouterConfig": admin.flush_router_config,
                 "mergeChunks": range_ops.merge_chunks, "moveRange": range_ops.move_range,
                 "configureCollectionBalancing": range_ops.configure_collection_balancing,
                 "removeShard": shard_removal.remove_shard, "removeshard": shard_removal.remove_shard,
                 "addShardToZone": zones.add_shard_to_zone, "removeShardFromZone": zones.remove_shard_from_zone,
                 "updateZoneKeyRange": zones.update_zone_key_range,
                 "refineCollectionShardKey": refine.refine_collection_shard_key,
                 "clearJumboFlag": range_ops.clear_jumbo_flag, "movePrimary": move_primary.move_primary,
                 "moveprimary": move_primary.move_primary, "reshardCollection": reshard.reshard_collection,
                 "balancerCollectionStatus": balancer.collection_status})


@handles("moveChunk", "movechunk")
def _move_chunk(router: Router, cmd: Mapping) -> dict:
    name = next(iter(cmd))
    cmap, _ = admin._sharded(router, cmd[name], name)
    to = cmd.get("to")
    if not isinstance(to, str):
        raise missing_field(name, "to")
    chunk = range_ops.chunk_named(cmap, cmd, "need to specify either a find query, or both lower and upper "
                                  "bounds.", ErrorCode.InvalidOptions)
    move_chunk(router, cmap.ns, chunk, to)
    return {"millis": 0}


@handles("splitVector")
def _split_vector(router: Router, cmd: Mapping) -> dict:
    """mongos passes splitVector to the primary shard of an unsharded collection; the chunks of
    a sharded one are split by the router (split, the balancer), not through it."""
    ns = cmd.get("splitVector")
    db = ns.partition(".")[0] if isinstance(ns, str) else ""
    if isinstance(ns, str) and router.chunk_map(ns) is not None:
        raise CommandError(ErrorCode.IllegalOperation, "can't do command: splitVector on sharded collection")
    shard = (router.primary_shard(db, create=False) if db else None) or router.shard_names()[0]
    reply = router.shards.command(shard, "admin", crud.for_shard(cmd))
    if reply.get("ok") != 1.0:
        raise ShardReplyError(reply)
    return crud._strip(dict(reply))


# -- CRUD ------------------------------------------------------------------------------------------
HANDLERS.update({"find": crud.find, "getMore": crud.get_more, "killCursors": crud.kill_cursors,
                 "insert": crud.insert, "update": crud.update, "delete": crud.delete,
                 "findAndModify": crud.find_and_modify, "findandmodify": crud.find_and_modify,
                 "count": crud.count, "distinct": crud.distinct, "aggregate": crud.aggregate})


@handles("explain")
def _explain(router: Router, cmd: Mapping) -> dict:
    inner = cmd.get("explain")
    if not isinstance(inner, Mapping) or not inner:
        raise CommandError(ErrorCode.BadValue, "explain command requires a nested object")
    name = next(iter(inner))
    db = cmd.get("$db", "test")
    coll = inner.get(name)
    if name not in ("find", "count", "distinct", "update", "delete", "findAndModify", "aggregate") \
            or not isinstance(coll, str):
        raise CommandError(ErrorCode.NotImplemented, f"explain of {name} {NOT_BUILT}")
    ns = f"{db}.{coll}"
    cmap = router.chunk_map(ns)
    if cmap is not None and name == "aggregate":
        raise CommandError(ErrorCode.NotImplemented, f"explain of an aggregation on a sharded collection {NOT_BUILT}")
    filter = (inner.get("filter") if name == "find" else inner.get("query") if name in ("count", "distinct",
                                                                                       "findAndModify")
              else ((inner.get("updates") or inner.get("deletes") or [{}])[0].get("q") if name in ("update", "delete")
                    else None))
    sub = {"explain": {**crud.for_shard(inner)}, "verbosity": cmd.get("verbosity", "allPlansExecution")}

    def attempt(cmap: Any) -> tuple[list, list, list]:
        shards = [router.primary_shard(db) or ""] if cmap is None else shards_of(target(filter, cmap), cmap)
        plans, stats = [], []
        for shard in shards:
            reply = router.shards.command(shard, db, router.versioned(sub, cmap, shard))
            if reply.get("ok") != 1.0:
                raise ShardReplyError(reply)
            qp = reply.get("queryPlanner", {})
            plans.append({"shardName": shard, "connectionString": _host(router, shard),
                          "serverInfo": reply.get("serverInfo", {}),
                          **{k: v for k, v in qp.items() if k != "mongosPlannerVersion"}})
            if "executionStats" in reply:
                stats.append({"shardName": shard, **reply["executionStats"]})
        return shards, plans, stats
    shards, plans, stats = router.with_fresh_map(ns, attempt)
    stage = "SINGLE_SHARD" if len(shards) == 1 else ("SHARD_MERGE_SORT" if name == "find" and inner.get("sort")
                                                      else "SHARD_MERGE")
    out: dict[str, Any] = {"queryPlanner": {"mongosPlannerVersion": 1,
                                            "winningPlan": {"stage": stage, "shards": plans}}}
    if stats:
        out["executionStats"] = {"nReturned": sum(int(s.get("nReturned", 0)) for s in stats),
                                 "executionTimeMillis": max(int(s.get("executionTimeMillis", 0)) for s in stats),
                                 "totalKeysExamined": sum(int(s.get("totalKeysExamined", 0)) for s in stats),
                                 "totalDocsExamined": sum(int(s.get("totalDocsExamined", 0)) for s in stats),
                                 "executionStages": {"stage": stage, "shards": stats}}
    out["serverInfo"] = {"host": socket.gethostname(), "version": MONGODB_VERSION}
    out["command"] = dict(inner, **{"$db": db})
    return out


def _host(router: Router, shard: str) -> str:
    for doc in router.catalog.shards():
        if doc["_id"] == shard:
            return str(doc["host"])
    return shard


# -- the config database --------------------------------------------------------------------------
def _config(router: Router, cmd: Mapping) -> Optional[dict]:
    name = next(iter(cmd))
    coll = cmd.get(name)
    if name in ("update", "insert"):
        return admin.config_settings_write(router, cmd)
    if not isinstance(coll, str):
        if name == "listCollections":
            names = ["shards", "databases", "collections", "chunks", "settings"]
            return {"cursor": {"id": Int64(0), "ns": "config.$cmd.listCollections",
                               "firstBatch": [{"name": n, "type": "collection", "options": {},
                                               "info": {"readOnly": True}} for n in names]}}
        return None
    docs = admin.config_documents(router, coll)
    if docs is None:
        return None
    if name == "find":
        return {"cursor": {"firstBatch": admin.config_find(router, cmd, docs), "id": Int64(0), "ns": f"config.{coll}"}}
    if name == "count":
        return {"n": len(admin.config_find(router, {"filter": cmd.get("query") or {}}, docs))}
    if name == "aggregate":
        def source(db: str, other: str, filter: Optional[dict] = None) -> list:
            return admin.config_documents(router, other) or []
        ctx = PipelineContext(db="config", source=source, collection=coll)
        out = list(run_pipeline(list(cmd.get("pipeline") or []), docs, ctx))
        return {"cursor": {"firstBatch": out, "id": Int64(0), "ns": f"config.{coll}"}}
    return None


# -- forwarding ------------------------------------------------------------------------------------
def _forward(router: Router, cmd: Mapping, name: str, db: str) -> dict:
    target_coll = cmd.get(name)
    if db == "admin":
        raise CommandError(ErrorCode.CommandNotFound, f"no such command: '{name}'")
    if isinstance(target_coll, str):
        ns = f"{db}.{target_coll}"
        cmap = router.chunk_map(ns)
        if cmap is not None:
            if name == "drop":
                return _drop_sharded(router, cmd, db, ns)
            if name in BROADCAST:
                reply: dict = {}
                for shard in router.shard_names():
                    reply = router.shards.command(shard, db, crud.for_shard(cmd))
                    if reply.get("ok") != 1.0 and reply.get("code") != int(ErrorCode.NamespaceNotFound):
                        raise ShardReplyError(reply)
                return crud._strip(dict(reply)) if reply.get("ok") == 1.0 else {}
            if name not in ONE_SHARD:
                raise CommandError(ErrorCode.NotImplemented, f"{name} on a sharded collection {NOT_BUILT}")
    elif name == "dropDatabase":
        return _drop_database(router, cmd, db)
    elif name == "dbStats" and any(c["_id"].startswith(db + ".") for c in router.catalog.collections()):
        raise CommandError(ErrorCode.NotImplemented, f"dbStats of a database with sharded collections {NOT_BUILT}")
    found = router.primary_shard(db, create=name not in ("listCollections", "dbStats", "listIndexes"))
    if found is None:
        if name == "listCollections":
            return {"cursor": {"id": Int64(0), "ns": f"{db}.$cmd.listCollections", "firstBatch": []}}
        found = router.shard_names()[0]
    shard = found
    reply = router.shards.command(shard, db, crud.for_shard(cmd), raw=name in ("listCollections", "listIndexes"))
    if reply.get("ok") != 1.0:
        raise ShardReplyError(reply)
    out = dict(reply)
    cursor = out.get("cursor")
    if isinstance(cursor, Mapping) and cursor.get("id"):
        from .shards import ShardCursor
        part = ShardCursor(router.shards, shard, db, str(target_coll), out)
        return crud.first_batch(router, str(cursor.get("ns")), iter(part), [part], None)
    return crud._strip(out)


def _drop_sharded(router: Router, cmd: Mapping, db: str, ns: str) -> dict:
    for shard in router.shard_names():
        reply = router.shards.command(shard, db, crud.for_shard(cmd))
        if reply.get("ok") != 1.0 and reply.get("code") != int(ErrorCode.NamespaceNotFound):
            raise ShardReplyError(reply)
    router.catalog.drop_collection(ns)
    router.forget(ns)
    router.forget_on_shards(ns)
    return {"ns": ns}


def _drop_database(router: Router, cmd: Mapping, db: str) -> dict:
    for coll in router.catalog.collections():
        if coll["_id"].startswith(db + "."):
            router.catalog.drop_collection(coll["_id"])
            router.forget(coll["_id"])
            router.forget_on_shards(coll["_id"])
    for shard in router.shard_names():
        reply = router.shards.command(shard, db, crud.for_shard(cmd))
        if reply.get("ok") != 1.0:
            raise ShardReplyError(reply)
    router.catalog.store.remove(f"/ginkgodb/sharding/databases/{db}")
    return {"dropped": db}


# -- the entry point -------------------------------------------------------------------------------
def dispatch(router: Router, cmd: Mapping) -> Mapping:
    try:
        if not cmd:
            raise CommandError(ErrorCode.FailedToParse, "Empty object is not a valid command")
        name = next(iter(cmd))
        db = cmd.get("$db", "admin")
        if transactions.in_transaction(cmd):
            answer = transactions.run(router, cmd)
            if isinstance(answer, RawBSONDocument):
                return answer
            answer["ok"] = 1.0
            return answer
        if name in REFUSED:
            raise CommandError(ErrorCode.NotImplemented, f"{name} {NOT_BUILT}")
        if name in SHARD_ONLY:
            raise CommandError(ErrorCode.CommandNotFound, f"no such command: '{name}'")
        reply: Optional[dict] = None
        if db == "config" and name not in ("getMore", "killCursors"):
            reply = _config(router, cmd)
            if reply is None and name not in ("listIndexes",):
                raise CommandError(ErrorCode.NotImplemented, f"{name} on config {NOT_BUILT}")
        if reply is None:
            handler = HANDLERS.get(name)
            reply = handler(router, cmd) if handler is not None else _forward(router, cmd, name, db)
        if isinstance(reply, RawBSONDocument):   # a shard's reply passed through whole (ok: 1 already)
            return reply
        reply["ok"] = 1.0
        return reply
    except CommandError as exc:
        return exc.to_reply()
    except (ShardReplyError, StaleConfig) as exc:
        out = {k: v for k, v in exc.reply.items() if k not in ("$clusterTime", "operationTime")}
        out["ok"] = 0.0
        return out
    except Exception as exc:   # a bug: mongod's internal error, logged
        log.exception("internal error in the router")
        return CommandError(ErrorCode.InternalError, f"internal error: {type(exc).__name__}: {exc}").to_reply()


__all__ = ["dispatch", "HANDLERS", "PROCESS_ID", "Timestamp"]
