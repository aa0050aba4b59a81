"""dropDatabase, listDatabases, dbStats, collStats."""
from __future__ import annotations

from ..errors import CommandError, ErrorCode
from .context import CommandContext
from .declare import Args, Target, boolean, command, doc, ignored, integer, on_cluster, on_collection, on_database


@command("dropDatabase", help="Drop a database and all of its collections.", write=True, write_concern=True,
         api_version_1=True, privileges=(on_database("dropDatabase"),))
def drop_database(ctx: CommandContext, args: Args) -> dict:
    ctx.engine.drop_database(args.db)
    return {"dropped": args.db}


#: A standalone mongod always has `admin` (its system.version holds the feature compatibility
#: version, which ginkgodb answers without a collection), so it is always listed; `config` and
#: `local` hold mongod's session cache and startup log, which ginkgodb does not keep, so they are
#: listed only once a client creates collections in them.
ALWAYS_LISTED = ("admin",)


@command("listDatabases", help="Databases with their sizes.", admin_only=True,
         fields=(doc("filter"), boolean("nameOnly"), boolean("authorizedDatabases")), api_version_1=True,
         privileges=(on_cluster("listDatabases"),))
def list_databases(ctx: CommandContext, args: Args) -> dict:
    engine = ctx.engine
    name_only = args.name_only
    dbs = []
    for name in sorted({*engine.database_names(), *ALWAYS_LISTED}):
        if name_only:
            dbs.append({"name": name})
            continue
        size = engine.database_stats(name)
        dbs.append({"name": name, "sizeOnDisk": size["storageSize"] + size["indexSize"],
                    "empty": size["collections"] == 0})
    filt = args.filter
    if filt:
        from ..query.match import compile_filter
        matcher = compile_filter(filt, where=False)
        dbs = [d for d in dbs if matcher(d)]
    if name_only:
        return {"databases": dbs}
    total = sum(d["sizeOnDisk"] for d in dbs)
    return {"databases": dbs, "totalSize": total, "totalSizeMb": total // (1024 * 1024)}


def _scale(args: Args) -> int:
    scale = args.scale
    if scale <= 0:
        raise CommandError(ErrorCode.BadValue, "Scale factor must be greater than zero")
    return scale


@command("dbStats", "dbstats", help="Counts and sizes of a database.",
         fields=(integer("scale", 1), ignored("freeStorage", "free space inside the data file is reported as 0")),
         privileges=(on_database("dbStats"),))
def db_stats(ctx: CommandContext, args: Args) -> dict:
    db = args.db
    scale = _scale(args)
    s = ctx.engine.database_stats(db)
    avg = s["dataSize"] / s["objects"] if s["objects"] else 0
    return {"db": db, "collections": s["collections"], "views": 0, "objects": s["objects"],
            "avgObjSize": avg, "dataSize": s["dataSize"] / scale, "storageSize": s["storageSize"] / scale,
            "indexes": s["indexes"], "indexSize": s["indexSize"] / scale,
            "totalSize": (s["storageSize"] + s["indexSize"]) / scale, "scaleFactor": scale,
            "fsUsedSize": 0, "fsTotalSize": 0}


def collection_stats(ctx: CommandContext, db: str, coll: str, scale: int) -> dict:
    meta = ctx.engine.collection_entry(db, coll)
    s = ctx.engine.collection_stats(db, coll)
    if meta is None or s is None:
        raise CommandError(ErrorCode.NamespaceNotFound, f"Collection [{db}.{coll}] not found.")
    out = {"ns": meta.ns, "size": s.data_size // scale, "count": s.count,
           "avgObjSize": s.data_size // s.count if s.count else 0,
           "storageSize": s.storage_size // scale, "freeStorageSize": 0,
           "capped": bool(meta.options.get("capped")), "nindexes": len(meta.indexes),
           "indexBuilds": [], "totalIndexSize": s.total_index_size // scale,
           "totalSize": (s.storage_size + s.total_index_size) // scale,
           "indexSizes": {k: v // scale for k, v in s.index_sizes.items()}, "scaleFactor": scale}
    if s.capped_max_size is not None:
        out["max"] = s.capped_max_docs
        out["maxSize"] = s.capped_max_size // scale
    series = ctx.engine.timeseries_stats(db, coll)
    if series is not None:
        out["timeseries"] = series
        out["nindexes"] = len(s.index_sizes)  # the buckets' indexes
    return out


@command("collStats", help="Counts and sizes of a collection (deprecated in favour of $collStats).",
         fields=(integer("scale", 1),), target=Target.COLLECTION, privileges=(on_collection("collStats"),))
def coll_stats(ctx: CommandContext, args: Args) -> dict:
    assert args.coll is not None  # Target.COLLECTION
    return collection_stats(ctx, args.db, args.coll, _scale(args))
