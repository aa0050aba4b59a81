"""aggregate: a pipeline over a collection (or `aggregate: 1`), returned as a cursor."""
from __future__ import annotations

import bson
from bson.raw_bson import RawBSONDocument

from ..engine import aggregate as A
from ..engine.cursors import DEFAULT_FIRST_BATCH, ServerCursor
from ..errors import CommandError, ErrorCode
from . import params as P
from .find import first_batch
from .operations import current_ops
from .registry import command

_FIELDS = frozenset({"pipeline", "cursor", "explain", "allowDiskUse", "collation", "hint",
                     "bypassDocumentValidation", "let", "fromMongos", "needsMerge", "isMapReduceCommand"})


def parse(cmd) -> tuple[str, object, list]:
    P.check_unknown(cmd, _FIELDS)
    db = P.database(cmd)
    target = cmd["aggregate"]
    if target == 1 or (P.is_number(target) and target == 1):
        coll = None
    elif isinstance(target, str):
        coll = P.collection(cmd, db)
    else:
        raise CommandError(ErrorCode.FailedToParse,
                           "Invalid command format: the 'aggregate' field must specify a collection name or 1")
    pipeline = cmd.get("pipeline")
    if pipeline is None:
        raise CommandError(ErrorCode.IDLFailedToParse, "BSON field 'aggregate.pipeline' is missing but a required field")
    if not isinstance(pipeline, list):
        raise CommandError(ErrorCode.TypeMismatch,
                           "BSON field 'aggregate.pipeline' is the wrong type 'object', expected type 'array'")
    pipeline = [P.plain(s) for s in pipeline]
    for stage in pipeline:
        if not isinstance(stage, dict) or len(stage) != 1:
            raise CommandError(ErrorCode.StageSpecNotSingleField,
                               "A pipeline stage specification object must contain exactly one field.")
    return db, coll, pipeline


def _encoded(docs):
    encode = bson.encode
    for d in docs:
        yield d if isinstance(d, RawBSONDocument) else RawBSONDocument(encode(d))


@command("aggregate", help="Run an aggregation pipeline.")
def aggregate(ctx, cmd) -> dict:
    db, coll, pipeline = parse(cmd)
    if P.get_bool(cmd, "explain"):
        from .explain import explain_aggregate
        return explain_aggregate(ctx, db, coll, pipeline, "queryPlanner", cmd)
    cursor_opts = P.get_doc(cmd, "cursor")
    if cursor_opts is None:
        raise CommandError(ErrorCode.FailedToParse,
                           "The 'cursor' option is required, except for aggregate with the explain argument")
    size = P.get_int(cursor_opts, "batchSize", None, command="aggregate.cursor", minimum=0)
    variables = P.get_let(cmd)
    reader = ctx.engine.reader()
    collation = P.get_doc(cmd, "collation")
    from ..engine.query import collation_of
    collation_of(collation)  # a malformed collation fails before any work
    docs = A.run(ctx.engine, db, coll, pipeline, ctx, variables, reader,
                 sources={"$currentOp": lambda spec: current_ops(ctx)}, collation=collation)
    ns = f"{db}.{coll}" if coll is not None else f"{db}.$cmd.aggregate"
    cursor = ServerCursor(ns, _encoded(docs), reader)
    return first_batch(ctx, cursor, DEFAULT_FIRST_BATCH if size is None else size, False)
