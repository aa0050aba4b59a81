"""createIndexes, dropIndexes, listIndexes."""
from __future__ import annotations

from ..engine import ddl
from ..engine.cursors import cursor_reply
from ..errors import CommandError, ErrorCode
from . import params as P
from .registry import command


@command("createIndexes", help="Build indexes over a collection (creating it if needed).", write=True)
def create_indexes(ctx, cmd) -> dict:
    P.check_unknown(cmd, frozenset({"indexes", "commitQuorum", "ignoreUnknownIndexOptions"}))
    db = P.database(cmd)
    coll = P.collection(cmd, db)
    specs = P.get_array(cmd, "indexes")
    if specs is None:
        raise CommandError(ErrorCode.IDLFailedToParse,
                           "BSON field 'createIndexes.indexes' is missing but a required field")
    if not specs:
        raise CommandError(ErrorCode.BadValue, "Must specify at least one index to create")
    specs = [P.plain(s) for s in specs]
    engine = ctx.engine
    with engine.write() as batch:
        created = batch.collection(db, coll) is None
        state = ddl.ensure_collection(batch, db, coll)  # refuses views (166)
        before, after, note = ddl.create_indexes(batch, state, specs)
    reply: dict = {"numIndexesBefore": before, "numIndexesAfter": after,
                   "createdCollectionAutomatically": created}
    if note:
        reply["note"] = note
    return reply


@command("dropIndexes", "deleteIndexes", help="Drop indexes by name, key pattern, list, or '*'.", write=True)
def drop_indexes(ctx, cmd) -> dict:
    P.check_unknown(cmd, frozenset({"index"}))
    db = P.database(cmd)
    coll = P.collection(cmd, db)
    which = P.plain(cmd.get("index"))
    if which is None:
        raise CommandError(ErrorCode.IDLFailedToParse,
                           "BSON field 'dropIndexes.index' is missing but a required field")
    engine = ctx.engine
    with engine.write() as batch:
        state = batch.collection(db, coll)
        if state is None:
            raise CommandError(ErrorCode.NamespaceNotFound, f"ns not found {db}.{coll}")
        was = ddl.drop_indexes(batch, state, which)
    return {"nIndexesWas": was}


@command("listIndexes", help="The index specifications of a collection, as a cursor.")
def list_indexes(ctx, cmd) -> dict:
    P.check_unknown(cmd, frozenset({"cursor", "includeBuildUUIDs", "includeIndexBuildInfo"}))
    db = P.database(cmd)
    coll = P.collection(cmd, db)
    state = ctx.engine.collection(db, coll)
    if state is None:
        raise CommandError(ErrorCode.NamespaceNotFound, f"ns does not exist: {db}.{coll}")
    return cursor_reply(0, f"{db}.{coll}", [ix.spec() for ix in state.meta.indexes], True)
