"""findAndModify: one document found and updated or removed atomically."""
from __future__ import annotations

from ..engine import writes
from ..engine.validation import validator
from ..errors import CommandError, ErrorCode
from . import params as P
from .registry import command
from .write import check_write_concern

_FIELDS = frozenset({"query", "sort", "remove", "update", "new", "fields", "upsert",
                     "bypassDocumentValidation", "arrayFilters", "hint", "collation"})


@command("findAndModify", "findandmodify", help="Find one document and update or remove it atomically.",
         write=True)
def find_and_modify(ctx, cmd) -> dict:
    name = next(iter(cmd))
    P.check_unknown(cmd, _FIELDS, name)
    db = P.database(cmd)
    coll = P.collection(cmd, db)
    remove = P.get_bool(cmd, "remove")
    update = cmd.get("update")
    new = P.get_bool(cmd, "new")
    upsert = P.get_bool(cmd, "upsert")
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
    req = writes.FindAndModifyRequest(
        query=P.get_doc(cmd, "query", {}), sort=P.get_doc(cmd, "sort") or None, remove=remove,
        update=update, new=new, fields=P.get_doc(cmd, "fields") or None, upsert=upsert,
        array_filters=P.get_array(cmd, "arrayFilters"), hint=P.plain(cmd.get("hint")),
        collation=P.get_doc(cmd, "collation"), variables=P.get_let(cmd))
    wc = cmd.get("writeConcern")
    if isinstance(wc, dict):
        check_write_concern(wc)
    body = writes.find_and_modify(ctx.engine, db, coll, req,
                                  validator(P.get_bool(cmd, "bypassDocumentValidation")))
    if isinstance(wc, dict) and (wc.get("j") or wc.get("fsync")):
        ctx.engine.sync()
    return body
