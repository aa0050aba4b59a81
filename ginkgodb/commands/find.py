"""find, getMore, killCursors."""
from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Optional

from ..engine import (
    DEFAULT_AWAIT_SECONDS,
    DEFAULT_FIRST_BATCH,
    ChangeStreamCursor,
    FindRequest,
    ServerCursor,
    TailableCursor,
    find_shape,
    id_hack_key,
    may_idhack,
    waits_refused,
)
from ..errors import CommandError, ErrorCode
from ..query import metadata
from ..query.projection import compile_projection
from . import fields as P
from .context import CommandContext
from .declare import (
    Args,
    Target,
    array,
    boolean,
    command,
    doc,
    ignored,
    integer,
    let,
    on_collection,
    string,
    value,
)
from .inline_writes import OFF_LOOP, OFF_THE_RULE
from .profiler import note_cursor, note_resumed
from .query_shapes import note_more
from .replies import cursor_reply, explain_reply

#: what keeps a find off the event loop: a read concern may wait (afterClusterTime, majority on a
#: replica set); the others make plans whose work a batch's size does not bound (a sort, a skip,
#: min/max), or ask for more than plain documents
_NOT_ON_THE_LOOP = frozenset({"readConcern", "projection", "sort", "skip", "hint", "collation", "min", "max",
                              "returnKey", "showRecordId", "tailable", "awaitData", "let", "allowDiskUse"})


def _short_read(cmd: Mapping, engine: Any) -> bool:
    """Finds whose first batch is bounded work run on the event loop when readers never wait
    for writers (LMDB): `{_id: v}`, and (unless inline_writes.OFF_THE_RULE names a field of the
    command) a first batch of at most 101 documents, which the plan then bounds
    (FindRequest.bounded: a plan that may read more than one index entry and document per
    result, or that needs the full planner, runs in a worker instead)."""
    if not getattr(engine.kv, "concurrent_readers", False) or not _NOT_ON_THE_LOOP.isdisjoint(cmd):
        return False
    filt = cmd.get("filter")
    if type(filt) is not dict:
        return False
    if id_hack_key(filt) is not None:
        return True
    if not OFF_THE_RULE.isdisjoint(cmd):   # a transaction's statement, a router's request
        return False
    size, limit = cmd.get("batchSize"), cmd.get("limit")
    return (((size is None or (type(size) is int and 0 < size <= DEFAULT_FIRST_BATCH))
             or (type(limit) is int and 0 < limit <= DEFAULT_FIRST_BATCH))
            and not OFF_LOOP.moved(engine, cmd, "find", filt))


FIND_FIELDS = (
    doc("filter", {}), doc("sort"), doc("projection"), value("hint"),
    integer("skip", 0, minimum=0), integer("limit", 0, minimum=0), integer("batchSize", minimum=0),
    boolean("singleBatch"), boolean("tailable"), boolean("awaitData"), boolean("noCursorTimeout"),
    doc("collation"), let(), doc("min"), doc("max"), boolean("returnKey"), boolean("showRecordId"),
    boolean("allowDiskUse"),  # a blocking SORT past its memory limit spills (or answers 292)
    ignored("allowPartialResults", "a standalone has no shards to miss"),
    ignored("oplogReplay", "deprecated since 4.4 and without effect in mongod"),
    ignored("readOnce", "a storage hint for WiredTiger's cache"),
    ignored("term", "replication-internal"),
    ignored("ntoreturn", "legacy OP_QUERY batch size, answered as batchSize by the wire layer"),
)


def find_request(args: Args) -> FindRequest:
    lo, hi = args.min or None, args.max or None
    if lo is not None and hi is not None and list(lo) != list(hi):
        raise CommandError(ErrorCode.MinMaxFieldsDiffer, "min and max must have the same field names")
    return FindRequest.of_find(args.filter, args.sort or None, args.projection or None, args.skip, args.limit,
                               args.hint, args.collation, args.let, lo, hi, args.return_key,
                               args.show_record_id,
                               args.allow_disk_use if args.cmd.get("allowDiskUse") is not None else None)


def allow_disk_use(args: Args) -> Optional[bool]:
    """The command's allowDiskUse; None when absent (the server's allowDiskUseByDefault;
    find_request has it inline)."""
    return args.allow_disk_use if args.cmd.get("allowDiskUse") is not None else None


def first_batch_size(size: Any) -> int:
    return DEFAULT_FIRST_BATCH if size is None else size


@command("find", help="Query documents; returns the first batch of a cursor.", fields=FIND_FIELDS,
         target=Target.COLLECTION, inline=_short_read, privileges=(on_collection("find"),),
         api_version_1=True)
def find(ctx: CommandContext, args: Args) -> dict:
    req = find_request(args)
    if req.projection:  # mongod parses the projection first, whether or not the collection exists
        with metadata.for_filter(req.filter):  # a $text query's documents have a textScore
            compiled = compile_projection(req.projection, query=req.filter)
        req.compiled_projection = (metadata.of_filter(req.filter), compiled)   # the plan may reuse it
    size = args.batch_size
    if size is None:
        size = DEFAULT_FIRST_BATCH     # first_batch_size, inline
    if args.tailable:
        return _tailable(ctx, args, req, size)
    if args.await_data:
        raise CommandError(ErrorCode.FailedToParse, "Cannot set 'awaitData' without also setting 'tailable'")
    if waits_refused():   # on the event loop (_short_read): a plan of unbounded work goes to a worker
        req.bounded = True
    started = time.perf_counter_ns()
    # a point read whose first batch ends it (no profiler watching, which records cursors):
    # answered without a cursor when IDHACK answers it (find_point), as first_batch would
    point = (ctx.engine.find_point(args.db, args.coll, req)
             if (size > 1 or args.single_batch) and ctx.profiling is None and may_idhack(req) else None)
    if point is not None:
        cursor: Any = point
        reply = cursor_reply(0, point.ns, [point.doc] if point.doc is not None else [], True)
    else:
        cursor = ctx.engine.find(args.db, args.coll, req, ctx, no_timeout=args.no_cursor_timeout)
        reply = first_batch(ctx, cursor, size, args.single_batch, args.cmd)
    stats = ctx.base_engine.query_stats    # a handler runs with its base engine set (dispatch)
    if stats.enabled:   # note_query never fails the find
        stats.note_query(cursor, lambda: find_shape(args.db, args.coll, req.filter, req.sort, req.projection,
                                                    req.skip, req.limit, req.hint, req.collation),
                         started, req.filter, args.layout)
    return reply


@find.explains
def explain_find(ctx: CommandContext, args: Args, verbosity: str) -> dict:
    return explain_reply(ctx.engine.explain_find(args.db, args.coll, find_request(args), verbosity,
                                                 dict(args.cmd), ctx))


def _tailable(ctx: CommandContext, args: Args, req: FindRequest, size: int) -> dict:
    if not ctx.engine.is_capped(args.db, args.coll):
        raise CommandError(ErrorCode.BadValue, "tailable cursor requested on non capped collection")
    if req.sort and list(req.sort) != ["$natural"]:
        raise CommandError(ErrorCode.BadValue, "cannot use tailable option with a sort other than {$natural: 1}")
    if (req.skip or req.limit or req.projection or req.hint is not None or req.min_key or req.max_key
            or req.return_key or req.show_record_id):
        raise CommandError(ErrorCode.NotImplemented,
                           "tailable cursors support a filter only (no skip, limit, projection, hint, min, max, "
                           "returnKey or showRecordId) in ginkgodb")
    cursor = ctx.engine.tail(args.db, args.coll, req.filter, ctx, await_data=args.await_data,
                             no_timeout=args.no_cursor_timeout)
    batch = cursor.next_batch(size, ctx) if size != 0 else []
    cursor.origin = args.cmd
    cid = ctx.engine.cursors.register(cursor)
    if ctx.profiling is not None:
        note_cursor(ctx, cursor, len(batch), cid)
    return cursor_reply(cid, cursor.ns, batch, True)


def first_batch(ctx: CommandContext, cursor: ServerCursor, size: int, single: bool, origin: Any = None) -> dict:
    """Run batch one; keep the cursor open only if more may follow."""
    try:
        batch = cursor.next_batch(size, ctx) if size != 0 else []
    except BaseException:
        cursor.close()
        raise
    if cursor.exhausted or single:
        cursor.close()
        if ctx.profiling is not None:
            note_cursor(ctx, cursor, len(batch), 0)
        return cursor_reply(0, cursor.ns, batch, True)
    cursor.origin = origin
    cid = ctx.engine.cursors.register(cursor)
    if ctx.profiling is not None:
        note_cursor(ctx, cursor, len(batch), cid)
    return cursor_reply(cid, cursor.ns, batch, True)


@command("getMore", help="Next batch of an open cursor.",
         fields=(string("collection", required=True), integer("batchSize", minimum=0),
                 ignored("term", "replication-internal"),
                 ignored("lastKnownCommittedOpTime", "replication-internal")),
         privileges=(on_collection("find"),), api_version_1=True)
def get_more(ctx: CommandContext, args: Args) -> dict:
    cid = args.value
    if not isinstance(cid, int) or isinstance(cid, bool):
        raise P.wrong_type("getMore", "getMore", cid, "long")
    ns = f"{args.db}.{args.collection}"
    cursor = ctx.engine.cursors.get(cid, ns)
    size = args.batch_size or None
    note_resumed(ctx, cursor)
    with cursor.lock:
        if isinstance(cursor, ChangeStreamCursor):
            return _change_stream_more(ctx, cursor, cid, ns, size, args)
        if isinstance(cursor, TailableCursor):
            wait = (P.get_int(args.cmd, "maxTimeMS", 1000) or 0) / 1000.0 if cursor.await_data else 0.0
            try:
                batch = cursor.next_batch(size, ctx, wait)
            except CommandError:  # a lost position (136) ends the cursor, as mongod's
                ctx.engine.cursors.forget(cid)
                cursor.close()
                raise
            if ctx.profiling is not None:
                note_cursor(ctx, cursor, len(batch), cid)
            return cursor_reply(cid, ns, batch, False)
        started = time.perf_counter_ns()
        try:
            batch = cursor.next_batch(size, ctx)
        except CommandError:
            ctx.engine.cursors.forget(cid)
            cursor.close()
            raise
        note_more(ctx, cursor, len(batch), started)
        if cursor.exhausted:
            ctx.engine.cursors.forget(cid)
            cursor.close()
            if ctx.profiling is not None:
                note_cursor(ctx, cursor, len(batch), 0)
            return cursor_reply(0, ns, batch, False)
    if ctx.profiling is not None:
        note_cursor(ctx, cursor, len(batch), cid)
    return cursor_reply(cid, ns, batch, False)


def _change_stream_more(ctx: CommandContext, cursor: ChangeStreamCursor, cid: int, ns: str, size, args: Args
                        ) -> dict:
    """A change stream's getMore waits up to maxTimeMS (1 s by default) for a commit."""
    wait = P.get_int(args.cmd, "maxTimeMS", None)
    seconds = DEFAULT_AWAIT_SECONDS if wait is None else wait / 1000.0
    try:
        batch = cursor.next_batch(size, ctx, seconds)
    except CommandError:
        ctx.engine.cursors.forget(cid)
        cursor.close()
        raise
    if cursor.exhausted:   # invalidated: the events up to the invalidate, then no cursor
        ctx.engine.cursors.forget(cid)
        cursor.close()
        return cursor_reply(0, ns, batch, False, cursor.post_batch_resume_token)
    return cursor_reply(cid, ns, batch, False, cursor.post_batch_resume_token)


@command("killCursors", help="Close open cursors.", fields=(array("cursors", required=True),),
         target=Target.COLLECTION, privileges=(on_collection("killCursors"),), api_version_1=True)
def kill_cursors(ctx: CommandContext, args: Args) -> dict:
    killed: list = []
    missing: list = []
    for cid in args.cursors:
        (killed if ctx.engine.cursors.kill(cid) else missing).append(P.int64(cid))
    return {"cursorsKilled": killed, "cursorsNotFound": missing, "cursorsAlive": [], "cursorsUnknown": []}
