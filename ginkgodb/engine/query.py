"""From a find-shaped request to a tree of stages, and the explain document for it."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ..planner.choose import QueryPlan, plan_query
from ..query.match import compile_filter
from . import stages as S


@dataclass
class FindRequest:
    filter: dict = field(default_factory=dict)
    sort: Optional[dict] = None
    projection: Optional[dict] = None
    skip: int = 0
    limit: int = 0
    hint: Any = None
    collation: Optional[dict] = None
    variables: Optional[dict] = None   # the command's `let`


@dataclass
class BuiltPlan:
    root: Any                   # the top stage
    plan: QueryPlan
    rejected: list
    matcher: Any


def sort_pairs(sort: Optional[dict]) -> list:
    if not sort:
        return []
    return [(k, v) for k, v in sort.items() if isinstance(v, (int, float)) and not isinstance(v, bool)]


def build(engine, state, reader, req: FindRequest, ctx=None, *, for_write: bool = False) -> BuiltPlan:
    """Plan and assemble stages. `for_write` skips projection (writers need whole documents)."""
    filt = req.filter or {}
    matcher = compile_filter(filt, collation=req.collation, variables=req.variables) if filt else None
    if state is None:
        return BuiltPlan(_Eof(), QueryPlan("EOF"), [], matcher)
    natural = _natural(req.sort)
    sort = None if natural else req.sort
    plan, rejected = plan_query([ix.meta for ix in state.indexes], filt, sort_pairs(sort), req.hint)
    if natural and plan.kind == "COLLSCAN":
        plan.direction = natural
    root = _scan(state, reader, plan, matcher, filt, ctx)
    if sort and not plan.provides_sort:
        from ..query.sort import compile_sort
        keep = req.skip + req.limit if req.limit else 0
        root = S.SortStage(root, sort, compile_sort(sort).key, keep)
    if req.skip:
        root = S.Skip(root, req.skip)
    if req.limit:
        root = S.Limit(root, req.limit)
    if req.projection and not for_write:
        from ..query.projection import compile_projection
        root = S.Project(root, req.projection, compile_projection(req.projection), matcher)
    return BuiltPlan(root, plan, rejected, matcher)


def _natural(sort: Optional[dict]) -> int:
    if sort and list(sort) == ["$natural"]:
        return 1 if sort["$natural"] >= 0 else -1
    return 0


def _scan(state, reader, plan: QueryPlan, matcher, filt: dict, ctx):
    if plan.kind == "COLLSCAN":
        return S.CollScan(state, reader, matcher, filt, plan.direction, ctx)
    scans = [_index_scan(state, reader, p, ctx) for p in plan.scans]
    if plan.kind == "OR":
        return S.Fetch(state, reader, S.OrScan(scans), matcher, filt)
    p = plan.scans[0]
    exact = getattr(p.bounds, "exact", False) and _only_index_fields(filt, p.index)
    return S.Fetch(state, reader, scans[0], None if exact else matcher, None if exact else filt)


def _only_index_fields(filt: dict, index) -> bool:
    return bool(filt) and all(not k.startswith("$") and k in index.key for k in filt)


def _index_scan(state, reader, p, ctx) -> S.IndexScan:
    runtime = state.index(p.index.name)
    return S.IndexScan(runtime, reader, p.bounds.key_ranges(), p.bounds.to_explain(), p.direction,
                       multikey=bool(p.index.multikey_paths), ctx=ctx)


class _Eof(S.Stage):
    name = "EOF"

    def rows(self):
        return iter(())


def explain_plan(plan: QueryPlan, state, req: FindRequest) -> dict:
    """A plan's shape without running it (rejectedPlans are described this way)."""
    built = build_shape(plan, state, req)
    return built.explain(False)


def build_shape(plan: QueryPlan, state, req: FindRequest):
    root = _scan(state, None, plan, None, req.filter or {}, None)
    if req.sort and not plan.provides_sort and not _natural(req.sort):
        root = S.SortStage(root, req.sort, None, req.skip + req.limit if req.limit else 0)
    if req.skip:
        root = S.Skip(root, req.skip)
    if req.limit:
        root = S.Limit(root, req.limit)
    return root


def explain_document(built: BuiltPlan, state, req: FindRequest, ns: str, verbosity: str,
                     millis: int, command: dict) -> dict:
    query_planner = {
        "namespace": ns, "indexFilterSet": False, "parsedQuery": req.filter or {},
        "planCacheShapeHash": "", "maxIndexedOrSolutionsReached": False,
        "maxIndexedAndSolutionsReached": False, "maxScansToExplodeReached": False,
        "winningPlan": built.root.explain(False),
        "rejectedPlans": [explain_plan(p, state, req) for p in built.rejected] if state is not None else [],
    }
    out: dict = {"explainVersion": "1", "queryPlanner": query_planner}
    if verbosity in ("executionStats", "allPlansExecution"):
        out["executionStats"] = {
            "executionSuccess": True, "nReturned": built.root.n_returned,
            "executionTimeMillis": millis, "totalKeysExamined": built.root.keys_examined(),
            "totalDocsExamined": built.root.docs_examined(),
            "executionStages": built.root.explain(True),
        }
        if verbosity == "allPlansExecution":
            out["executionStats"]["allPlansExecution"] = []
    out["command"] = command
    return out
