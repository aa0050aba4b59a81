"""aggregate: a pipeline over a collection (or `aggregate: 1`), returned as a cursor."""
from __future__ import annotations

import time
from collections.abc import Mapping

from ..engine import aggregate_shape
from ..errors import CommandError, ErrorCode
from . import fields as P
from .context import CommandContext
from .current_op import current_ops
from .declare import Args, Target, boolean, command, doc, ignored, let, on_collection, value
from .find import allow_disk_use, first_batch, first_batch_size
from .query_shapes import note_first
from .replies import cursor_reply, explain_reply


def _pipeline(args: Args) -> list:
    pipeline = args.pipeline
    if not isinstance(pipeline, list):
        raise CommandError(ErrorCode.TypeMismatch,
                           "BSON field 'aggregate.pipeline' is the wrong type 'object', expected type 'array'")
    pipeline = [P.plain(s) for s in pipeline]
    for stage in pipeline:
        if not isinstance(stage, dict) or len(stage) != 1:
            raise CommandError(ErrorCode.StageSpecNotSingleField,
                               "A pipeline stage specification object must contain exactly one field.")
    return pipeline


def _in_api_v1(cmd: Mapping) -> bool:
    """Collection-level aggregation is in the Stable API; `aggregate: 1` stages are not."""
    return isinstance(cmd.get("aggregate"), str)


@command("aggregate", help="Run an aggregation pipeline.",
         fields=(value("pipeline", required=True), doc("cursor"), boolean("explain"),
                 doc("collation"), let(), boolean("bypassDocumentValidation"),
                 value("hint"),
                 boolean("allowDiskUse"),  # $sort and $group past their memory limits spill (or 292)
                 ignored("fromMongos", "router-internal"), ignored("needsMerge", "router-internal"),
                 ignored("isMapReduceCommand", "mapReduce-internal")),
         target=Target.COLLECTION_OR_ONE, api_version_1=_in_api_v1, write_concern=True,
         privileges=(on_collection("find"),))
def aggregate(ctx: CommandContext, args: Args) -> dict:
    pipeline = _pipeline(args)
    if pipeline and "$changeStream" in pipeline[0]:
        return _change_stream(ctx, args, pipeline)
    if args.explain:
        return _explain(ctx, args, pipeline, "queryPlanner")
    if args.cursor is None:
        raise CommandError(ErrorCode.FailedToParse,
                           "The 'cursor' option is required, except for aggregate with the explain argument")
    size = P.get_int(args.cursor, "batchSize", None, command="aggregate.cursor", minimum=0)
    started = time.perf_counter_ns()
    cursor = ctx.engine.aggregate(args.db, args.coll, pipeline, ctx, args.let, args.collation,
                                  sources={"$currentOp": lambda spec: current_ops(ctx)}, hint=args.hint,
                                  allow_disk_use=allow_disk_use(args))
    reply = first_batch(ctx, cursor, first_batch_size(size), False, args.cmd)
    if not (pipeline and next(iter(pipeline[0])) in _UNRECORDED):
        first_match = pipeline[0].get("$match") if pipeline else None
        note_first(ctx, cursor, reply, lambda: aggregate_shape(args.db, args.coll, pipeline), started,
                   first_match if isinstance(first_match, dict) else {})
    return reply


#: statistics-reading aggregations are not workload (mongod leaves $queryStats out of its own store)
_UNRECORDED = frozenset({"$queryStats", "$indexStats", "$collStats", "$currentOp", "$listLocalSessions",
                         "$listSessions"})


@aggregate.explains
def explain_aggregate(ctx: CommandContext, args: Args, verbosity: str) -> dict:
    return _explain(ctx, args, _pipeline(args), verbosity)


def _explain(ctx: CommandContext, args: Args, pipeline: list, verbosity: str) -> dict:
    return explain_reply(ctx.engine.explain_aggregate(args.db, args.coll, pipeline, verbosity, dict(args.cmd),
                                                      ctx, hint=args.hint))


def _change_stream(ctx: CommandContext, args: Args, pipeline: list) -> dict:
    """`$changeStream` first: a tailable cursor over the oplog's events (its first batch does not
    wait), every reply with a postBatchResumeToken."""
    if args.explain:
        raise CommandError(ErrorCode.NotImplemented, "explain of a $changeStream is not supported by ginkgodb")
    if args.cursor is None:
        raise CommandError(ErrorCode.FailedToParse,
                           "The 'cursor' option is required, except for aggregate with the explain argument")
    collation = args.collation
    if collation and collation.get("locale") != "simple":
        raise CommandError(ErrorCode.NotImplemented,
                           "a $changeStream with a collation other than simple is not supported by ginkgodb")
    size = P.get_int(args.cursor, "batchSize", None, command="aggregate.cursor", minimum=0)
    cursor = ctx.engine.change_stream(args.db, args.coll, pipeline[0]["$changeStream"], pipeline[1:], ctx,
                                      args.let)
    try:
        batch = cursor.next_batch(first_batch_size(size), ctx) if size != 0 else []
    except BaseException:
        cursor.close()
        raise
    if cursor.exhausted:
        cursor.close()
        return cursor_reply(0, cursor.ns, batch, True, cursor.post_batch_resume_token)
    cid = ctx.engine.cursors.register(cursor)
    return cursor_reply(cid, cursor.ns, batch, True, cursor.post_batch_resume_token)
