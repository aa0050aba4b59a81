"""explain: the plan (and optionally execution statistics) of find, aggregate, count, distinct,
update, delete and findAndModify."""
from __future__ import annotations

from ..version import MONGODB_VERSION
from ..engine import aggregate as A
from ..engine import reads
from ..engine.query import FindRequest
from ..errors import CommandError, ErrorCode
from . import params as P
from .registry import command

_VERBOSITIES = ("queryPlanner", "executionStats", "allPlansExecution")


def _server_info() -> dict:
    major, minor, patch = (int(x) for x in MONGODB_VERSION.split("."))
    return {"host": "localhost", "port": 27017, "version": MONGODB_VERSION, "gitVersion": "ginkgodb"}


def _finish(out: dict) -> dict:
    out["serverInfo"] = _server_info()
    out["serverParameters"] = {"internalQueryFacetBufferSizeBytes": 104857600,
                               "internalQueryMaxBlockingSortMemoryUsageBytes": 104857600}
    return out


def explain_aggregate(ctx, db: str, coll, pipeline: list, verbosity: str, command: dict) -> dict:
    req, rest = A.split_pushdown(pipeline)
    inner = reads.explain_find(ctx.engine, db, coll or "$cmd.aggregate", req, verbosity, command, ctx)
    if not rest:
        return _finish(inner)
    stages = [{"$cursor": {k: v for k, v in inner.items() if k in ("queryPlanner", "executionStats")}}]
    stages += [dict(s) for s in rest]
    return _finish({"explainVersion": "1", "stages": stages, "command": command})


def _find_request_for(name: str, inner: dict) -> FindRequest:
    if name == "find":
        from .find import parse_find
        return parse_find(inner)
    if name == "count":
        return FindRequest(filter=P.get_doc(inner, "query", {}), skip=P.get_int(inner, "skip", 0),
                           limit=abs(P.get_int(inner, "limit", 0)))
    if name == "distinct":
        return FindRequest(filter=P.get_doc(inner, "query", {}))
    if name in ("findAndModify", "findandmodify"):
        return FindRequest(filter=P.get_doc(inner, "query", {}), sort=P.get_doc(inner, "sort"), limit=1)
    if name == "update":
        st = P.plain(inner["updates"][0])
        return FindRequest(filter=P.plain(st.get("q", {})), limit=0 if st.get("multi") else 1)
    if name == "delete":
        st = P.plain(inner["deletes"][0])
        return FindRequest(filter=P.plain(st.get("q", {})), limit=1 if st.get("limit") else 0)
    raise CommandError(ErrorCode.CommandNotFound, f"Explain failed due to unknown command: {name}")


@command("explain", help="Describe how a command would run (and run it for executionStats).")
def explain(ctx, cmd) -> dict:
    inner = P.get_doc(cmd, "explain")
    if not inner:
        raise CommandError(ErrorCode.FailedToParse, "explain command requires a nested object")
    verbosity = cmd.get("verbosity", "allPlansExecution")
    if verbosity not in _VERBOSITIES:
        raise CommandError(ErrorCode.BadValue, f"verbosity string must be one of {{'queryPlanner', "
                                               f"'executionStats', 'allPlansExecution'}}")
    db = P.database(cmd)
    inner = dict(inner)
    inner["$db"] = db
    name = next(iter(inner))
    if name == "aggregate":
        from .aggregate import parse
        _, coll, pipeline = parse(inner)
        return explain_aggregate(ctx, db, coll, pipeline, verbosity, inner)
    coll = P.collection(inner, db)
    req = _find_request_for(name, inner)
    return _finish(reads.explain_find(ctx.engine, db, coll, req, verbosity, inner, ctx))
