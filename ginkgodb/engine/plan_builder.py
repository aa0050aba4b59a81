"""From a find-shaped request to a tree of stages, and the explain document for it."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Optional

import bson

from ..bsonutil import collation
from ..planner.choose import IndexPlan, QueryPlan, plan_query
from ..planner.fast import fast_plan
from ..planner.parsed_query import ParsedQuery, id_point_key
from ..query.external_sort import Spill
from ..query.match import compile_filter
from . import plan_stages as S


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
    allow_disk_use: Optional[bool] = None  # None: the server's allowDiskUseByDefault
    temp_dir: Optional[str] = None     # where a spilling sort writes (None: the system's)


class BuiltPlan:
    """The stages of one query, with its plan for explain and its filter compiled on demand."""

    def __init__(self, root: Any, plan: Any, rejected: list, req: FindRequest, matcher: Any = None) -> None:
        self.root, self.plan, self.rejected, self._req = root, plan, rejected, req
        self._matcher = matcher

    @property
    def matcher(self) -> Any:
        """The whole filter, compiled (positional `$` needs it even when an index answered)."""
        if self._matcher is None and self._req.filter:
            self._matcher = cached_filter(self._req.filter, self._req)
        return self._matcher


_FILTER_CACHE: dict = {}
_FILTER_CACHE_SIZE = 512


class CollatedMatcher:
    """A filter under a non-simple collation: strings on both sides compared by their keys."""

    __slots__ = ("_inner", "_coll", "paths")

    def __init__(self, inner: Any, coll: Any) -> None:
        self._inner, self._coll, self.paths = inner, coll, inner.paths

    def match(self, doc: dict) -> bool:
        return self._inner.match(self._coll.transform(doc))

    __call__ = match

    def positional(self, doc: dict):
        return self._inner.positional(self._coll.transform(doc))


_COLLATIONS: dict = {}


def collation_of(spec: Optional[dict]) -> Any:
    """The Collation for a spec (None: simple), one object per distinct spec so key caches last."""
    if not spec:
        return None
    key = bson.encode(spec)
    if key not in _COLLATIONS:
        _COLLATIONS[key] = collation.from_spec(spec)
    return _COLLATIONS[key]


def cached_filter(spec: dict, req: FindRequest) -> Any:
    """compile_filter, remembered by the filter's BSON bytes: applications repeat their queries."""
    coll = collation_of(req.collation)
    if coll is not None:
        return CollatedMatcher(compile_filter(coll.transform_query(spec), variables=req.variables), coll)
    if req.variables:
        return compile_filter(spec, variables=req.variables)
    try:
        key = bson.encode(spec)
    except Exception:  # not encodable as given: let the compiler report it
        return compile_filter(spec)
    matcher = _FILTER_CACHE.get(key)
    if matcher is None:
        matcher = compile_filter(spec)
        if len(_FILTER_CACHE) >= _FILTER_CACHE_SIZE:
            _FILTER_CACHE.pop(next(iter(_FILTER_CACHE)))
        _FILTER_CACHE[key] = matcher
    return matcher


def sort_pairs(sort: Optional[dict]) -> list:
    if not sort:
        return []
    return [(k, v) for k, v in sort.items() if isinstance(v, (int, float)) and not isinstance(v, bool)]


def build(state, reader, req: FindRequest, ctx=None, *, for_write: bool = False,
          explain: bool = False) -> BuiltPlan:
    """Plan and assemble stages. `for_write` skips projection (writers need whole documents).
    Explain builds exactly what a query runs (`explain` is accepted for callers' clarity)."""
    filt = req.filter or {}
    if state is None:
        return BuiltPlan(_Eof(), QueryPlan("EOF"), [], req, cached_filter(filt, req) if filt else None)
    if req.collation is None and state.meta.options.get("collation"):
        req = replace(req, collation=state.meta.options["collation"])  # the collection's default
    coll = collation_of(req.collation)
    root: Any = None
    query = ParsedQuery(filt)  # parsed once: IDHACK, the shortcut planner, bounds, implication
    if req.hint is None and not req.sort and not req.collation:
        id_key = query.id_key
        if id_key is not None:
            root = S.IdHack(state, reader, id_key)
        else:
            root, fast = _fast(state, reader, query, req, ctx)
    if root is not None:
        plan, exact = QueryPlan(root.name), False
        rejected: list = []
        if root.name != "IDHACK":
            plan = QueryPlan("IXSCAN", [IndexPlan(fast.index, None)])
    else:
        natural = _natural(req.sort)
        sort = None if natural else req.sort
        usable = [ix for ix in state.indexes if collation.same(ix.collation, coll)]
        plan_query_ = query if coll is None else ParsedQuery(coll.transform_query(filt))
        plan, rejected = plan_query(usable, plan_query_, sort_pairs(sort), req.hint)
        if rejected and _tied(plan, rejected[0]):
            plan, rejected = _trial(state, reader, [plan, *rejected], filt, req)
        if natural and plan.kind == "COLLSCAN":
            plan.direction = natural
        root, exact = _scan(state, reader, plan, filt, req, ctx)
        if sort and not plan.provides_sort:
            from ..query.sort import compile_sort
            keep = req.skip + req.limit if req.limit else 0
            key = compile_sort(sort).key
            if coll is not None:
                key = _collated_key(key, coll)
            root = S.SortStage(root, sort, key, keep, Spill.for_request(req.allow_disk_use, req.temp_dir))
    built = BuiltPlan(root, plan, rejected, req)
    if reader is not None and hasattr(reader, "depends_on"):
        reader.depends_on(state.meta.id, _index_ids(plan, root), f"collection {state.meta.ns}")
    if req.skip:
        if exact and isinstance(root, S.Fetch) and root.matcher is None:
            root.child = S.SkipKeys(root.child, req.skip)  # skip index entries, not fetched documents
        else:
            root = S.Skip(root, req.skip)
    if req.limit:
        root = S.Limit(root, req.limit)
    if req.projection and not for_write:
        from ..query.projection import compile_projection
        root = S.Project(root, req.projection, compile_projection(req.projection, query=req.filter), built)
    built.root = root
    return built


def _index_ids(plan: QueryPlan, root: Any) -> tuple[int, ...]:
    """The ids of the indexes a plan scans (cursors re-check they still exist between batches)."""
    ids = [p.index.id for p in plan.scans]
    index = getattr(getattr(root, "child", root), "index", None)
    if index is not None and not ids:
        ids.append(index.meta.id)
    return tuple(ids)


def _collated_key(key, coll):
    return lambda doc: key(coll.transform(doc))


def id_hack_key(filt: dict):
    """The encoded _id of a `{_id: <plain value>}` filter, else None (IDHACK's test)."""
    return id_point_key(filt)


TRIAL_RESULTS = 101   # mongod's trial period: enough results to fill a first batch ...
TRIAL_WORKS = 10_000  # ... or this many keys and documents examined


def _tied(a: QueryPlan, b: QueryPlan) -> bool:
    return (a.kind == b.kind == "IXSCAN" and a.scans[0].score == b.scans[0].score
            and a.provides_sort == b.provides_sort)


def _trial(state, reader, plans: list, filt: dict, req: FindRequest) -> tuple:
    """Run the equally ranked plans a little and keep the most productive, as mongod's
    multi-planner does: results per unit of work, the earliest to finish winning ties."""
    tied = [p for p in plans if _tied(plans[0], p)]
    scored = []
    for order, plan in enumerate(tied):
        root, _ = _scan(state, reader, plan, filt, req, None)
        results = 0
        finished = True
        for _ in root.rows():
            results += 1
            if results >= TRIAL_RESULTS or root.keys_examined() + root.docs_examined() >= TRIAL_WORKS:
                finished = False
                break
        work = root.keys_examined() + root.docs_examined() + 1
        scored.append((finished, results / work, -order, plan))
    scored.sort(key=lambda t: t[:3], reverse=True)
    winner = scored[0][3]
    return winner, [p for p in plans if p is not winner]


def _fast(state, reader, query: ParsedQuery, req: FindRequest, ctx) -> tuple:
    """(the shortcut plan's stages, the shortcut plan), or (None, None)."""
    fp = fast_plan(state.index_map, query)
    if fp is None:
        return None, None
    access = state.index(fp.index.name)
    scan = S.IndexScan(access, reader, fp.ranges, lambda: access.explain_bounds(query), 1,
                       multikey=bool(fp.index.multikey_paths), ctx=ctx)
    residual = cached_filter(fp.residual, req) if fp.residual else None
    return S.Fetch(state, reader, scan, residual, fp.residual), fp


def _natural(sort: Optional[dict]) -> int:
    if sort and list(sort) == ["$natural"]:
        return 1 if sort["$natural"] >= 0 else -1
    return 0


def _scan(state, reader, plan: QueryPlan, filt: dict, req: FindRequest, ctx) -> tuple:
    """(the scan stage, whether its bounds alone answer the filter)."""
    matcher = cached_filter(filt, req) if filt else None
    if plan.kind == "COLLSCAN":
        return S.CollScan(state, reader, matcher, filt, plan.direction, ctx), not filt
    scans = [_index_scan(state, reader, p, ctx) for p in plan.scans]
    if plan.kind == "OR":
        return S.Fetch(state, reader, S.OrScan(scans), matcher, filt), False
    p = plan.scans[0]
    exact = not filt or (getattr(p.bounds, "exact", False) and _only_index_fields(filt, p.index))
    return S.Fetch(state, reader, scans[0], None if exact else matcher, None if exact else filt), exact


def _only_index_fields(filt: dict, index) -> bool:
    return bool(filt) and all(not k.startswith("$") and k in index.key for k in filt)


def _index_scan(state, reader, p, ctx) -> S.IndexScan:
    runtime = state.index(p.index.name)
    return S.IndexScan(runtime, reader, p.bounds.key_ranges(), p.bounds.to_explain, p.direction,
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
    root: Any
    root, _ = _scan(state, None, plan, req.filter or {}, req, None)
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
