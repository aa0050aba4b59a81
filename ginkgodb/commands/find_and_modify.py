"""findAndModify: one document found and updated or removed atomically."""
from __future__ import annotations

from ..engine import FindAndModifyRequest, FindRequest
from ..errors import CommandError, ErrorCode
from . import fields as P
from .context import CommandContext
from .declare import Args, Target, array, boolean, command, doc, let, on_collection, value
from .inline_writes import short_find_and_modify
from .query_shapes import note_sampled
from .replies import explain_reply
from .write import finish


@command("findAndModify", "findandmodify", help="Find one document and update or remove it atomically.",
         fields=(doc("query", {}), doc("sort"), boolean("remove"), value("update"), boolean("new"),
                 doc("fields"), boolean("upsert"), boolean("bypassDocumentValidation"), array("arrayFilters"),
                 value("hint"), doc("collation"), let()),
         target=Target.COLLECTION, write=True, write_concern=True, api_version_1=True, inline=short_find_and_modify,
         privileges=(on_collection("find", "update", "remove", "insert"),))
def find_and_modify(ctx: CommandContext, args: Args) -> dict:
    req = parse_request(args)
    body = ctx.engine.find_and_modify(args.db, args.coll, req, args.bypass_document_validation)
    note_sampled(ctx, "findAndModify", args.db, args.coll, req.query, req.update)
    return finish(ctx, args.cmd, None, body)


def parse_request(args: Args) -> FindAndModifyRequest:
    remove, update, new, upsert = args.remove, args.update, args.new, args.upsert
    if remove and update is not None:
        raise CommandError(ErrorCode.FailedToParse, "Cannot specify both an update and remove=true")
    if not remove and update is None:
        raise CommandError(ErrorCode.FailedToParse, "Either an update or remove=true must be specified")
    if remove and new:
        raise CommandError(ErrorCode.FailedToParse,
                           "Cannot specify both new=true and remove=true; 'remove' always returns the deleted document")
    if remove and upsert:
        raise CommandError(ErrorCode.FailedToParse, "Cannot specify both upsert=true and remove=true ")
    update = P.plain(update)
    if update is not None and not isinstance(update, (dict, list)):
        raise CommandError(ErrorCode.FailedToParse, "Update argument must be either an object or an array")
    return FindAndModifyRequest(
        query=args.query, sort=args.sort or None, remove=remove, update=update, new=new,
        fields=args.fields or None, upsert=upsert, array_filters=args.array_filters, hint=args.hint,
        collation=args.collation, variables=args.let)


@find_and_modify.explains
def explain_find_and_modify(ctx: CommandContext, args: Args, verbosity: str) -> dict:
    req = parse_request(args)
    find = FindRequest(filter=req.query, sort=req.sort, limit=1, hint=req.hint, collation=req.collation)
    return explain_reply(ctx.engine.explain_find(args.db, args.coll, find, verbosity, dict(args.cmd), ctx))
