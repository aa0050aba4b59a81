"""compact: mongod's request to give a collection's free space back to the filesystem.

LMDB keeps freed pages in its free list and reuses them for later writes of any collection, so
a running server has nothing to give back per collection: compact checks the namespace as
mongod does and answers `bytesFreed: 0`. Shrinking the data file itself is an offline copy
(`ginkgodb dump` and `restore`, or LMDB's compacting copy), as docs/compatibility.md says.
"""
from __future__ import annotations

from ..errors import CommandError, ErrorCode
from .context import CommandContext
from .declare import Args, Target, command, ignored, on_collection


@command("compact", help="compact a collection: give its free space back (ginkgodb: LMDB reuses it in place)",
         target=Target.COLLECTION, write=True, privileges=(on_collection("compact"),),
         fields=(ignored("force", "a standalone runs compact at once; force only matters to a primary"),
                 ignored("freeSpaceTargetMB", "LMDB reuses free pages in place: nothing is given back")))
def compact(ctx: CommandContext, args: Args) -> dict:
    meta = ctx.engine.collection_entry(args.db, args.coll)
    if meta is None:
        raise CommandError(ErrorCode.NamespaceNotFound, "collection does not exist")
    if meta.is_view:
        raise CommandError(ErrorCode.CommandNotSupportedOnView, f"can't compact a view {args.db}.{args.coll}")
    return {"bytesFreed": 0}
