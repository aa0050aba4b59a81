"""find, getMore, killCursors."""
from __future__ import annotations

from ..engine import reads
from ..engine.cursors import DEFAULT_FIRST_BATCH, TailableCursor, cursor_reply
from ..engine.query import FindRequest
from ..errors import CommandError, ErrorCode
from . import params as P
from .registry import command

_FIND_FIELDS = frozenset({
    "filter", "sort", "projection", "hint", "skip", "limit", "batchSize", "singleBatch", "max", "min",
    "returnKey", "showRecordId", "tailable", "oplogReplay", "noCursorTimeout", "awaitData",
    "allowPartialResults", "collation", "allowDiskUse", "readOnce", "ntoreturn", "term",
})


def parse_find(cmd) -> FindRequest:
    P.check_unknown(cmd, _FIND_FIELDS)
    req = FindRequest(
        filter=P.get_doc(cmd, "filter", {}),
        sort=P.get_doc(cmd, "sort") or None,
        projection=P.get_doc(cmd, "projection") or None,
        skip=P.get_int(cmd, "skip", 0, minimum=0),
        limit=P.get_int(cmd, "limit", 0, minimum=0),
        hint=P.plain(cmd.get("hint")),
        collation=P.get_doc(cmd, "collation"),
        variables=P.get_let(cmd),
    )
    return req


def first_batch_size(cmd) -> int | None:
    size = P.get_int(cmd, "batchSize", None, minimum=0)
    return DEFAULT_FIRST_BATCH if size is None else size


@command("find", help="Query documents; returns the first batch of a cursor.")
def find(ctx, cmd) -> dict:
    db = P.database(cmd)
    coll = P.collection(cmd, db)
    req = parse_find(cmd)
    size = first_batch_size(cmd)
    single = P.get_bool(cmd, "singleBatch")
    no_timeout = P.get_bool(cmd, "noCursorTimeout")
    if P.get_bool(cmd, "tailable"):
        return _tailable(ctx, cmd, db, coll, req, size, no_timeout)
    if P.get_bool(cmd, "awaitData"):
        raise CommandError(ErrorCode.FailedToParse, "Cannot set 'awaitData' without also setting 'tailable'")
    cursor = reads.open_find(ctx.engine, db, coll, req, ctx, no_timeout=no_timeout)
    return first_batch(ctx, cursor, size, single)


def _tailable(ctx, cmd, db: str, coll: str, req, size, no_timeout: bool) -> dict:
    state = ctx.engine.collection(db, coll)
    if state is None or not state.capped:
        raise CommandError(ErrorCode.BadValue, "tailable cursor requested on non capped collection")
    if req.sort and list(req.sort) != ["$natural"] or req.skip or req.limit or req.projection:
        raise CommandError(ErrorCode.BadValue,
                           "tailable cursors support a filter only (no sort, skip, limit or projection)")
    cursor = reads.open_tailable(ctx.engine, db, coll, req.filter, ctx,
                                 await_data=P.get_bool(cmd, "awaitData"), no_timeout=no_timeout)
    batch = cursor.next_batch(size, ctx) if size != 0 else []
    cid = ctx.engine.cursors.register(cursor)
    return cursor_reply(cid, cursor.ns, batch, True)


def first_batch(ctx, cursor, size, single: bool) -> dict:
    """Run batch one; keep the cursor open only if more may follow."""
    batch = cursor.next_batch(size, ctx) if size != 0 else []
    if cursor.exhausted or single:
        cursor.close()
        return cursor_reply(0, cursor.ns, batch, True)
    cid = ctx.engine.cursors.register(cursor)
    return cursor_reply(cid, cursor.ns, batch, True)


@command("getMore", help="Next batch of an open cursor.")
def get_more(ctx, cmd) -> dict:
    cid = cmd["getMore"]
    if not isinstance(cid, int) or isinstance(cid, bool):
        raise CommandError(ErrorCode.TypeMismatch,
                           "BSON field 'getMore.getMore' is the wrong type, expected type 'long'")
    P.check_unknown(cmd, frozenset({"collection", "batchSize", "maxTimeMS", "term", "lastKnownCommittedOpTime"}))
    db = P.database(cmd)
    coll = P.get_str(cmd, "collection")
    if coll is None:
        raise CommandError(ErrorCode.IDLFailedToParse,
                           "BSON field 'getMore.collection' is missing but a required field")
    ns = f"{db}.{coll}"
    cursor = ctx.engine.cursors.get(cid, ns)
    size = P.get_int(cmd, "batchSize", None, minimum=0) or None
    with cursor.lock:
        if isinstance(cursor, TailableCursor):
            wait = P.get_int(cmd, "maxTimeMS", 1000) / 1000.0 if cursor.await_data else 0.0
            return cursor_reply(cid, ns, cursor.next_batch(size, ctx, wait), False)
        batch = cursor.next_batch(size, ctx)
        if cursor.exhausted:
            ctx.engine.cursors.forget(cid)
            cursor.close()
            return cursor_reply(0, ns, batch, False)
    return cursor_reply(cid, ns, batch, False)


@command("killCursors", help="Close open cursors.")
def kill_cursors(ctx, cmd) -> dict:
    P.database(cmd)
    ids = P.get_array(cmd, "cursors")
    if ids is None:
        raise CommandError(ErrorCode.IDLFailedToParse,
                           "BSON field 'killCursors.cursors' is missing but a required field")
    killed, missing = [], []
    for cid in ids:
        (killed if ctx.engine.cursors.kill(cid) else missing).append(P.int64(cid))
    return {"cursorsKilled": killed, "cursorsNotFound": missing, "cursorsAlive": [], "cursorsUnknown": []}
