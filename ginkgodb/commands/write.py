"""insert, update, delete: write commands with writeErrors as mongod reports them."""
from __future__ import annotations

from ..engine import writes
from ..engine.validation import validator
from ..errors import CommandError, ErrorCode
from ..limits import MAX_WRITE_BATCH_SIZE
from . import params as P
from .registry import command


def _statements(cmd, field: str) -> list:
    items = cmd.get(field)
    if items is None:
        raise CommandError(ErrorCode.IDLFailedToParse,
                           f"BSON field '{next(iter(cmd))}.{field}' is missing but a required field")
    if not isinstance(items, list):
        raise CommandError(ErrorCode.TypeMismatch,
                           f"BSON field '{next(iter(cmd))}.{field}' is the wrong type, expected type 'array'")
    if not items or len(items) > MAX_WRITE_BATCH_SIZE:
        raise CommandError(ErrorCode.InvalidLength,
                           f"Write batch sizes must be between 1 and {MAX_WRITE_BATCH_SIZE}. Got {len(items)} operations.")
    return items


def finish(ctx, cmd, outcome, body: dict) -> dict:
    """writeErrors if any, and `j: true` durability before the acknowledgement."""
    if outcome.errors:
        body["writeErrors"] = outcome.errors
    wc = cmd.get("writeConcern")
    if isinstance(wc, dict):
        check_write_concern(wc)
        if wc.get("j") or wc.get("fsync"):
            ctx.engine.sync()
    return body


def check_write_concern(wc: dict) -> None:
    w = wc.get("w", 1)
    if isinstance(w, str) and w != "majority":
        raise CommandError(ErrorCode.UnknownReplWriteConcern,
                           f"Cannot satisfy write concern: unrecognized write concern mode '{w}'")
    if P.is_number(w) and (w < 0 or w > 1):
        if w < 0:
            raise CommandError(ErrorCode.FailedToParse, "w has to be a non-negative number and not greater than 50")
        raise CommandError(ErrorCode.BadValue, "cannot use 'w' > 1 on a standalone")


@command("insert", help="Insert documents.", write=True)
def insert(ctx, cmd) -> dict:
    P.check_unknown(cmd, frozenset({"documents", "ordered", "bypassDocumentValidation"}))
    db = P.database(cmd)
    coll = P.collection(cmd, db)
    docs = _statements(cmd, "documents")
    for d in docs:
        if not hasattr(d, "keys"):
            raise CommandError(ErrorCode.TypeMismatch, "BSON field 'insert.documents.0' is the wrong type, "
                                                       "expected type 'object'")
    ordered = P.get_bool(cmd, "ordered", True)
    outcome = writes.insert(ctx.engine, db, coll, docs, ordered,
                            validator(P.get_bool(cmd, "bypassDocumentValidation")))
    return finish(ctx, cmd, outcome, {"n": outcome.n})


# `sort` arrived with MongoDB 8.0: a 7.0 server rejects it as an unknown field.
_UPDATE_FIELDS = frozenset({"q", "u", "upsert", "multi", "arrayFilters", "hint", "collation", "c",
                            "upsertSupplied"})


def parse_update_statement(st, variables=None) -> writes.UpdateStatement:
    st = P.plain(st)
    if not isinstance(st, dict):
        raise CommandError(ErrorCode.TypeMismatch, "BSON field 'update.updates' entries must be objects")
    P.check_unknown(st, _UPDATE_FIELDS, "update.updates")
    if "q" not in st or "u" not in st:
        missing = "q" if "q" not in st else "u"
        raise CommandError(ErrorCode.IDLFailedToParse,
                           f"BSON field 'update.updates.{missing}' is missing but a required field")
    u = st["u"]
    if not isinstance(u, (dict, list)):
        u = P.plain(u)
        if not isinstance(u, (dict, list)):
            raise CommandError(ErrorCode.FailedToParse, "Update argument must be either an object or an array")
    return writes.UpdateStatement(
        q=P.get_doc(st, "q", {}, command="update.updates"), u=u,
        upsert=P.get_bool(st, "upsert", command="update.updates"),
        multi=P.get_bool(st, "multi", command="update.updates"),
        array_filters=P.get_array(st, "arrayFilters", command="update.updates"),
        hint=P.plain(st.get("hint")), collation=P.get_doc(st, "collation", command="update.updates"),
        variables=variables)


@command("update", help="Update documents.", write=True)
def update(ctx, cmd) -> dict:
    P.check_unknown(cmd, frozenset({"updates", "ordered", "bypassDocumentValidation"}))
    db = P.database(cmd)
    coll = P.collection(cmd, db)
    variables = P.get_let(cmd)
    statements = [parse_update_statement(st, variables) for st in _statements(cmd, "updates")]
    outcome = writes.update(ctx.engine, db, coll, statements, P.get_bool(cmd, "ordered", True),
                            validator(P.get_bool(cmd, "bypassDocumentValidation")))
    body: dict = {"n": outcome.n, "nModified": outcome.n_modified}
    if outcome.upserted:
        body["upserted"] = outcome.upserted
    return finish(ctx, cmd, outcome, body)


@command("delete", help="Delete documents.", write=True)
def delete(ctx, cmd) -> dict:
    P.check_unknown(cmd, frozenset({"deletes", "ordered"}))
    db = P.database(cmd)
    coll = P.collection(cmd, db)
    statements = []
    variables = P.get_let(cmd)
    for st in _statements(cmd, "deletes"):
        st = P.plain(st)
        P.check_unknown(st, frozenset({"q", "limit", "hint", "collation"}), "delete.deletes")
        if "q" not in st or "limit" not in st:
            missing = "q" if "q" not in st else "limit"
            raise CommandError(ErrorCode.IDLFailedToParse,
                               f"BSON field 'delete.deletes.{missing}' is missing but a required field")
        statements.append(writes.DeleteStatement(
            q=P.get_doc(st, "q", {}, command="delete.deletes"),
            limit=P.get_int(st, "limit", 0, command="delete.deletes"),
            hint=P.plain(st.get("hint")), collation=P.get_doc(st, "collation", command="delete.deletes"),
            variables=variables))
    outcome = writes.delete(ctx.engine, db, coll, statements, P.get_bool(cmd, "ordered", True))
    return finish(ctx, cmd, outcome, {"n": outcome.n})
