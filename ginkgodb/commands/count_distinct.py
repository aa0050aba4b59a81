"""count and distinct."""
from __future__ import annotations

from ..engine import FindRequest
from ..errors import CommandError, ErrorCode
from .context import CommandContext
from .declare import Args, Target, command, doc, ignored, integer, on_collection, string, value
from .query_shapes import note_sampled
from .replies import explain_reply


@command("count", help="Count documents matching a query.",
         fields=(doc("query"), integer("limit", 0), integer("skip", 0), value("hint"), doc("collation"),
                 ignored("fields", "a legacy field that mongod ignores")),
         target=Target.COLLECTION, privileges=(on_collection("find"),), api_version_1=True)
def count(ctx: CommandContext, args: Args) -> dict:
    skip, limit = _skip_limit(args)
    n = ctx.engine.count(args.db, args.coll, args.query, skip, limit, args.hint, ctx, args.collation)
    note_sampled(ctx, "count", args.db, args.coll, args.query)
    return {"n": n}


def _skip_limit(args: Args) -> tuple[int, int]:
    if args.skip < 0:
        raise CommandError(ErrorCode.BadValue, "skip value is negative in count query")
    return args.skip, abs(args.limit)


@count.explains
def explain_count(ctx: CommandContext, args: Args, verbosity: str) -> dict:
    skip, limit = _skip_limit(args)
    req = FindRequest(filter=args.query or {}, skip=skip, limit=limit, hint=args.hint, collation=args.collation)
    return explain_reply(ctx.engine.explain_find(args.db, args.coll, req, verbosity, dict(args.cmd), ctx))


@command("distinct", help="Distinct values of a field among matching documents.",
         fields=(string("key", required=True), doc("query"), doc("collation"), value("hint")),
         target=Target.COLLECTION, privileges=(on_collection("find"),))
def distinct(ctx: CommandContext, args: Args) -> dict:
    values = ctx.engine.distinct(args.db, args.coll, args.key, args.query, ctx, args.collation, args.hint)
    note_sampled(ctx, "distinct", args.db, args.coll, args.query)
    return {"values": values}


@distinct.explains
def explain_distinct(ctx: CommandContext, args: Args, verbosity: str) -> dict:
    req = FindRequest(filter=args.query or {}, hint=args.hint, collation=args.collation)
    return explain_reply(ctx.engine.explain_find(args.db, args.coll, req, verbosity, dict(args.cmd), ctx))
