"""dropDatabase, listDatabases, dbStats, collStats."""
from __future__ import annotations

from ..engine import ddl
from ..engine.stats import collection_sizes, database_sizes
from ..errors import CommandError, ErrorCode
from . import params as P
from .registry import command


@command("dropDatabase", help="Drop a database and all of its collections.", write=True)
def drop_database(ctx, cmd) -> dict:
    db = P.database(cmd)
    engine = ctx.engine
    with engine.write() as batch:
        for meta in batch.catalog.in_db(db):
            ddl.drop_collection(batch, meta)
    return {"dropped": db}


@command("listDatabases", help="Databases with their sizes.", admin_only=True)
def list_databases(ctx, cmd) -> dict:
    P.check_unknown(cmd, frozenset({"filter", "nameOnly", "authorizedDatabases"}))
    engine = ctx.engine
    name_only = P.get_bool(cmd, "nameOnly")
    dbs = []
    for name in engine.catalog.databases():
        if name_only:
            dbs.append({"name": name})
            continue
        size = database_sizes(engine, name)
        dbs.append({"name": name, "sizeOnDisk": size["storageSize"] + size["indexSize"],
                    "empty": size["objects"] == 0})
    filt = P.get_doc(cmd, "filter")
    if filt:
        from ..query.match import compile_filter
        matcher = compile_filter(filt)
        dbs = [d for d in dbs if matcher(d)]
    if name_only:
        return {"databases": dbs}
    total = sum(d["sizeOnDisk"] for d in dbs)
    return {"databases": dbs, "totalSize": total, "totalSizeMb": total // (1024 * 1024)}


def _scale(cmd) -> int:
    scale = P.get_int(cmd, "scale", 1)
    if scale <= 0:
        raise CommandError(ErrorCode.BadValue, "Scale factor must be greater than zero")
    return scale


@command("dbStats", "dbstats", help="Counts and sizes of a database.")
def db_stats(ctx, cmd) -> dict:
    db = P.database(cmd)
    scale = _scale(cmd)
    s = database_sizes(ctx.engine, db)
    avg = s["dataSize"] / s["objects"] if s["objects"] else 0
    return {"db": db, "collections": s["collections"], "views": 0, "objects": s["objects"],
            "avgObjSize": avg, "dataSize": s["dataSize"] / scale, "storageSize": s["storageSize"] / scale,
            "indexes": s["indexes"], "indexSize": s["indexSize"] / scale,
            "totalSize": (s["storageSize"] + s["indexSize"]) / scale, "scaleFactor": scale,
            "fsUsedSize": 0, "fsTotalSize": 0}


def collection_stats(ctx, db: str, coll: str, scale: int) -> dict:
    meta = ctx.engine.catalog.get(db, coll)
    if meta is None:
        raise CommandError(ErrorCode.NamespaceNotFound, f"Collection [{db}.{coll}] not found.")
    s = collection_sizes(ctx.engine, meta)
    out = {"ns": meta.ns, "size": s.data_size // scale, "count": s.count,
           "avgObjSize": s.data_size // s.count if s.count else 0,
           "storageSize": s.storage_size // scale, "freeStorageSize": 0,
           "capped": bool(meta.options.get("capped")), "nindexes": len(meta.indexes),
           "indexBuilds": [], "totalIndexSize": s.total_index_size // scale,
           "totalSize": (s.storage_size + s.total_index_size) // scale,
           "indexSizes": {k: v // scale for k, v in s.index_sizes.items()}, "scaleFactor": scale}
    if meta.options.get("capped"):
        out["max"] = meta.options.get("max", 0)
        out["maxSize"] = meta.options.get("size")
    return out


@command("collStats", help="Counts and sizes of a collection (deprecated in favour of $collStats).")
def coll_stats(ctx, cmd) -> dict:
    db = P.database(cmd)
    coll = P.collection(cmd, db)
    return collection_stats(ctx, db, coll, _scale(cmd))
