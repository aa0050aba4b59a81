"""count and distinct."""
from __future__ import annotations

from ..engine import reads
from ..errors import CommandError, ErrorCode
from . import params as P
from .registry import command


@command("count", help="Count documents matching a query.")
def count(ctx, cmd) -> dict:
    P.check_unknown(cmd, frozenset({"query", "limit", "skip", "hint", "collation", "fields"}))
    db = P.database(cmd)
    coll = P.collection(cmd, db)
    skip = P.get_int(cmd, "skip", 0)
    if skip < 0:
        raise CommandError(ErrorCode.BadValue, "skip value is negative in count query")
    limit = abs(P.get_int(cmd, "limit", 0))
    n = reads.count(ctx.engine, db, coll, P.get_doc(cmd, "query"), skip, limit, P.plain(cmd.get("hint")),
                    ctx, P.get_doc(cmd, "collation"))
    return {"n": n}


@command("distinct", help="Distinct values of a field among matching documents.")
def distinct(ctx, cmd) -> dict:
    P.check_unknown(cmd, frozenset({"key", "query", "collation", "hint"}))
    db = P.database(cmd)
    coll = P.collection(cmd, db)
    key = cmd.get("key")
    if key is None:
        raise CommandError(ErrorCode.IDLFailedToParse, "BSON field 'distinct.key' is missing but a required field")
    key = P.get_str(cmd, "key")
    values = reads.distinct(ctx.engine, db, coll, key, P.get_doc(cmd, "query"), ctx,
                            P.get_doc(cmd, "collation"), P.plain(cmd.get("hint")))
    return {"values": values}
