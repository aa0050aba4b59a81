"""insert, update, delete: write commands with writeErrors as mongod reports them."""
from __future__ import annotations

import time
from collections.abc import Mapping
from itertools import repeat
from typing import Any, Optional

from ..engine import DeleteStatement, FindRequest, UpdateStatement, WriteOutcome
from ..errors import CommandError, ErrorCode
from ..limits import MAX_WRITE_BATCH_SIZE
from . import fields as P
from .context import CommandContext
from .declare import Args, Field, Target, boolean, command, let, on_collection, value
from .inline_writes import short_write
from .profiler import note_writes
from .query_shapes import INSERT, REMOVE, UPDATE, note_write
from .replies import explain_reply


def _statements(args: Args, field: str) -> list:
    items = getattr(args, field)
    if not isinstance(items, list):
        raise P.wrong_type(args.name, field, items, "array")
    if not items or len(items) > MAX_WRITE_BATCH_SIZE:
        raise CommandError(ErrorCode.InvalidLength,
                           f"Write batch sizes must be between 1 and {MAX_WRITE_BATCH_SIZE}. "
                           f"Got {len(items)} operations.")
    return items


def finish(ctx: CommandContext, cmd: Mapping, outcome: Optional[WriteOutcome], body: dict) -> dict:
    """writeErrors if any, and `j: true` durability before the acknowledgement."""
    if outcome is not None:
        if outcome.errors:
            body["writeErrors"] = outcome.errors
        note_writes(ctx, outcome)
    wc = cmd.get("writeConcern")
    if isinstance(wc, Mapping) and (wc.get("j") or wc.get("fsync")):
        ctx.engine.sync()
    return body


def _raw_list(name: str) -> Field:
    """The statements array as given (documents stay raw BSON for the engine)."""
    return Field(name, lambda cmd, f, c: cmd.get(f), required=True)


@command("insert", help="Insert documents.",
         fields=(_raw_list("documents"), boolean("ordered", True), boolean("bypassDocumentValidation")),
         privileges=(on_collection("insert"),), target=Target.COLLECTION, write=True, write_concern=True,
         api_version_1=True, inline=short_write)
def insert(ctx: CommandContext, args: Args) -> dict:
    docs = _statements(args, "documents")
    if not all(map(hasattr, docs, repeat("keys"))):   # in C: the loop finds which one
        for i, d in enumerate(docs):
            if not hasattr(d, "keys"):
                raise P.wrong_type("insert", f"documents.{i}", d, "object")
    started = time.perf_counter_ns()
    outcome = ctx.engine.insert(args.db, args.coll, docs, args.ordered, args.bypass_document_validation)
    note_write(ctx, INSERT, args.db, args.coll, (), started)
    return finish(ctx, args.cmd, outcome, {"n": outcome.n})


# `sort` arrived with MongoDB 8.0: a 7.0 server rejects it as an unknown field.
_UPDATE_FIELDS = frozenset({"q", "u", "upsert", "multi", "arrayFilters", "hint", "collation", "c",
                            "upsertSupplied"})


#: the fields of a statement the fast path reads (what drivers send for update_one/update_many)
_PLAIN_UPDATE_FIELDS = frozenset({"q", "u", "upsert", "multi"})


def parse_update_statement(st: Any, variables: Optional[dict] = None) -> UpdateStatement:
    if type(st) is dict and _PLAIN_UPDATE_FIELDS.issuperset(st):
        # the common statement: document q and u, boolean flags; what the checks below give it
        q, u = st.get("q"), st.get("u")
        upsert, multi = st.get("upsert", False), st.get("multi", False)
        if (type(q) is dict and type(u) is dict and (upsert is False or upsert is True)
                and (multi is False or multi is True)):
            return UpdateStatement(q, u, upsert, multi, variables=variables)
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
    return UpdateStatement(
        q=P.get_doc(st, "q", {}, command="update.updates"), u=u,
        upsert=P.get_bool(st, "upsert", command="update.updates"),
        multi=P.get_bool(st, "multi", command="update.updates"),
        array_filters=P.get_array(st, "arrayFilters", command="update.updates"),
        hint=P.plain(st.get("hint")), collation=P.get_doc(st, "collation", command="update.updates"),
        variables=variables)


@command("update", help="Update documents.",
         fields=(_raw_list("updates"), boolean("ordered", True), boolean("bypassDocumentValidation"), let()),
         privileges=(on_collection("update"),), target=Target.COLLECTION, write=True, write_concern=True,
         api_version_1=True, inline=short_write)
def update(ctx: CommandContext, args: Args) -> dict:
    statements = [parse_update_statement(st, args.let) for st in _statements(args, "updates")]
    started = time.perf_counter_ns()
    outcome = ctx.engine.update(args.db, args.coll, statements, args.ordered, args.bypass_document_validation)
    note_write(ctx, UPDATE, args.db, args.coll, statements, started)
    body: dict = {"n": outcome.n, "nModified": outcome.n_modified}
    if outcome.upserted:
        body["upserted"] = outcome.upserted
    return finish(ctx, args.cmd, outcome, body)


@update.explains
def explain_update(ctx: CommandContext, args: Args, verbosity: str) -> dict:
    st = parse_update_statement(_statements(args, "updates")[0], args.let)
    req = FindRequest(filter=st.q, limit=0 if st.multi else 1, hint=st.hint, collation=st.collation)
    return explain_reply(ctx.engine.explain_find(args.db, args.coll, req, verbosity, dict(args.cmd), ctx))


def parse_delete_statement(st: Any, variables: Optional[dict] = None) -> DeleteStatement:
    st = P.plain(st)
    if not isinstance(st, dict):
        raise CommandError(ErrorCode.TypeMismatch, "BSON field 'delete.deletes' entries must be objects")
    P.check_unknown(st, frozenset({"q", "limit", "hint", "collation"}), "delete.deletes")
    if "q" not in st or "limit" not in st:
        missing = "q" if "q" not in st else "limit"
        raise CommandError(ErrorCode.IDLFailedToParse,
                           f"BSON field 'delete.deletes.{missing}' is missing but a required field")
    return DeleteStatement(
        q=P.get_doc(st, "q", {}, command="delete.deletes"),
        limit=P.get_int(st, "limit", 0, command="delete.deletes") or 0,
        hint=P.plain(st.get("hint")), collation=P.get_doc(st, "collation", command="delete.deletes"),
        variables=variables)


@command("delete", help="Delete documents.",
         fields=(_raw_list("deletes"), boolean("ordered", True), let(),
                 value("bypassDocumentValidation")),
         privileges=(on_collection("remove"),), target=Target.COLLECTION, write=True, write_concern=True,
         api_version_1=True, inline=short_write)
def delete(ctx: CommandContext, args: Args) -> dict:
    # bypassDocumentValidation: pymongo sends it with bulk writes; deletes validate nothing
    statements = [parse_delete_statement(st, args.let) for st in _statements(args, "deletes")]
    started = time.perf_counter_ns()
    outcome = ctx.engine.delete(args.db, args.coll, statements, args.ordered)
    note_write(ctx, REMOVE, args.db, args.coll, statements, started)
    return finish(ctx, args.cmd, outcome, {"n": outcome.n})


@delete.explains
def explain_delete(ctx: CommandContext, args: Args, verbosity: str) -> dict:
    st = parse_delete_statement(_statements(args, "deletes")[0], args.let)
    req = FindRequest(filter=st.q, limit=1 if st.limit else 0, hint=st.hint, collation=st.collation)
    return explain_reply(ctx.engine.explain_find(args.db, args.coll, req, verbosity, dict(args.cmd), ctx))
