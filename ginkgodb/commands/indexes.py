"""createIndexes, dropIndexes, listIndexes."""
from __future__ import annotations

from ..errors import CommandError, ErrorCode
from . import fields as P
from .context import CommandContext
from .declare import Args, Target, array, command, ignored, on_collection, value
from .replies import cursor_reply


@command("createIndexes", help="Build indexes over a collection (creating it if needed).",
         fields=(array("indexes", required=True),
                 ignored("commitQuorum", "a standalone builds an index on its only member"),
                 ignored("ignoreUnknownIndexOptions", "unknown index options are refused either way")),
         target=Target.COLLECTION, write=True, write_concern=True, api_version_1=True,
         privileges=(on_collection("createIndex"),))
def create_indexes(ctx: CommandContext, args: Args) -> dict:
    if not args.indexes:
        raise CommandError(ErrorCode.BadValue, "Must specify at least one index to create")
    build = ctx.engine.create_indexes(args.db, args.coll, [P.plain(s) for s in args.indexes])
    reply: dict = {"numIndexesBefore": build.before, "numIndexesAfter": build.after,
                   "createdCollectionAutomatically": build.created_collection}
    if build.note:
        reply["note"] = build.note
    return reply


@command("dropIndexes", "deleteIndexes", help="Drop indexes by name, key pattern, list, or '*'.",
         fields=(value("index", required=True),), target=Target.COLLECTION, write=True, write_concern=True,
         api_version_1=True, privileges=(on_collection("dropIndex"),))
def drop_indexes(ctx: CommandContext, args: Args) -> dict:
    return {"nIndexesWas": ctx.engine.drop_indexes(args.db, args.coll, args.index)}


@command("listIndexes", help="The index specifications of a collection, as a cursor.",
         fields=(value("cursor"), ignored("includeBuildUUIDs", "no index build is ever in progress"),
                 ignored("includeIndexBuildInfo", "no index build is ever in progress")),
         target=Target.COLLECTION, api_version_1=True, privileges=(on_collection("listIndexes"),))
def list_indexes(ctx: CommandContext, args: Args) -> dict:
    specs = ctx.engine.index_specs(args.db, args.coll)
    if specs is None:
        raise CommandError(ErrorCode.NamespaceNotFound, f"ns does not exist: {args.db}.{args.coll}")
    return cursor_reply(0, f"{args.db}.{args.coll}", specs, True)
