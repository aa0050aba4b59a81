"""mapReduce (deprecated since 5.0, still in 7.0): JavaScript map/reduce/finalize over a query's
documents, answered inline or written to a collection (replace, merge, reduce)."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Optional

import bson

from ..engine import FindRequest
from ..errors import CommandError, ErrorCode
from ..query.js import MapReduce, MapReduceSpec
from ..query.js.mapreduce import function_source
from . import fields as P
from .context import CommandContext
from .declare import Args, Target, boolean, command, doc, ignored, integer, on_collection, value

_INTERNAL_DATABASES = ("admin", "local", "config")
_BATCH = 1000


@dataclass
class OutOptions:
    """mongod's MapReduceOutOptions: inline, or a collection with replace/merge/reduce."""

    kind: str                    # "inline", "replace", "merge", "reduce"
    collection: str = ""
    db: Optional[str] = None


def parse_out(out: Any) -> OutOptions:
    """mongod's MapReduceOutOptions::parseFromBSON, with its checks and messages."""
    if isinstance(out, str):
        return OutOptions("replace", out)
    if not isinstance(out, dict):
        raise CommandError(ErrorCode.BadValue, "'out' must be either a string or an object")
    if "inline" in out:
        if len(out) != 1:
            raise CommandError(ErrorCode.InvalidOptions, "'inline' must be specified alone")
        if not P.is_number(out["inline"]) or float(str(out["inline"])) != 1.0:
            raise CommandError(ErrorCode.BadValue, "'inline' takes only numeric '1'")
        return OutOptions("inline")
    allowed = 4
    if "sharded" in out:
        if not isinstance(out["sharded"], bool):
            raise CommandError(ErrorCode.BadValue, "sharded field value must be boolean")
        if not out["sharded"]:
            raise CommandError(ErrorCode.BadValue, "sharded field value must be true")
    else:
        allowed -= 1
    for kind in ("replace", "merge", "reduce"):
        if kind in out:
            if not isinstance(out[kind], str):
                raise CommandError(ErrorCode.BadValue,
                                   f"'{kind}' supports only string consisting of output collection name")
            target = OutOptions(kind, out[kind])
            break
    else:
        raise CommandError(ErrorCode.BadValue, "'out' requires 'replace', 'merge' or 'reduce'")
    if "db" in out:
        if not isinstance(out["db"], str):
            raise CommandError(ErrorCode.BadValue, "db field value must be string")
        if out["db"] in _INTERNAL_DATABASES:
            raise CommandError(ErrorCode.CommandNotSupported, "cannot target internal database as output")
        target.db = out["db"]
    else:
        allowed -= 1
    if "nonAtomic" in out:
        if not isinstance(out["nonAtomic"], bool):
            raise CommandError(ErrorCode.BadValue, "nonAtomic field value must be boolean")
        if not out["nonAtomic"]:
            raise CommandError(ErrorCode.BadValue, "nonAtomic field value must be true")
    else:
        allowed -= 1
    if len(out) != allowed:
        raise CommandError(ErrorCode.BadValue, "'out' supports only output type with collection name, "
                                               "optional 'sharded' and optional 'db'")
    return target


@command("mapReduce", "mapreduce",
         help="Run a map/reduce operation on the server.\nNote this is used for aggregation, not "
              "querying, in MongoDB.",
         fields=(value("map", required=True), value("reduce", required=True), value("out", required=True),
                 doc("query"), doc("sort"), integer("limit", 0), value("finalize"), doc("scope"),
                 boolean("bypassDocumentValidation"), doc("collation"),
                 ignored("jsMode", "a mongod execution mode without effect on results since 4.4"),
                 ignored("verbose", "mongod 7.0 ignores it: results never carry timing")),
         target=Target.COLLECTION, write=True, write_concern=True,
         privileges=(on_collection("find", "insert", "remove", "update"),))
def map_reduce(ctx: CommandContext, args: Args) -> dict:
    out = parse_out(args.out)
    coll = args.coll or ""  # Target.COLLECTION: always a name
    spec = MapReduceSpec(function_source("map", args.map), function_source("reduce", args.reduce),
                         function_source("finalize", args.finalize) if args.finalize is not None else None,
                         dict(args.scope or {}))
    if args.limit < 0:
        raise CommandError(ErrorCode.BadValue, "limit must be non-negative")
    entry = ctx.engine.collection_entry(args.db, coll)
    if entry is not None and entry.options.get("viewOn") is not None:
        raise CommandError(ErrorCode.CommandNotSupportedOnView,
                           f"Namespace {args.db}.{coll} is a view, not a collection")
    job = MapReduce(spec)
    req = FindRequest(filter=args.query or {}, sort=args.sort or None, limit=args.limit,
                      collation=args.collation)
    results = job.run(_documents(ctx, args.db, coll, req))
    if out.kind == "inline":
        return {"results": results}
    out_db = out.db or args.db
    if out.kind == "reduce":
        results = _reduce_with_existing(ctx, job, out_db, out.collection, results)
    _write(ctx, out, out_db, results, args.bypass_document_validation)
    return {"result": {"db": out.db, "collection": out.collection} if out.db else out.collection}


def _documents(ctx: CommandContext, db: str, coll: str, req: FindRequest) -> Iterator[dict]:
    """The input documents, decoded, batch by batch (each batch checks the deadline)."""
    cursor = ctx.engine.find(db, coll, req, ctx)
    try:
        while not cursor.exhausted:
            for raw in cursor.next_batch(_BATCH, ctx):
                yield bson.decode(raw.raw)
    finally:
        cursor.close()


def _reduce_with_existing(ctx: CommandContext, job: MapReduce, db: str, coll: str, results: list) -> list:
    """out: {reduce}: a key already in the output is reduced with its stored value."""
    if not results:
        return results
    keys = [r["_id"] for r in results]
    existing = {bson.encode({"k": d["_id"]}): d for d in
                _documents(ctx, db, coll, FindRequest(filter={"_id": {"$in": keys}}))}
    merged = []
    for r in results:
        old = existing.get(bson.encode({"k": r["_id"]}))
        if old is not None:
            r = {"_id": r["_id"], "value": job.reduce(r["_id"], [r["value"], old.get("value")])}
        merged.append(r)
    return merged


def _write(ctx: CommandContext, out: OutOptions, db: str, results: list, bypass: bool) -> None:
    if out.kind == "replace":
        final: dict = {"$out": {"db": db, "coll": out.collection}}
    else:
        final = {"$merge": {"into": {"db": db, "coll": out.collection}, "on": "_id",
                            "whenMatched": "replace", "whenNotMatched": "insert"}}
    pipeline = [{"$documents": results}, final]
    cursor = ctx.engine.aggregate(db, None, pipeline, ctx)
    try:
        while not cursor.exhausted:
            cursor.next_batch(_BATCH, ctx)
    finally:
        cursor.close()
