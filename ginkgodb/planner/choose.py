"""Choosing how to run a query: which index (if any), its bounds, and whether it yields the sort.

Rules, in the spirit of mongod's planner: enumerate every index whose bounds the filter narrows
(or whose order gives the requested sort), rank them (equality prefix length, a bounded range
after it, uniqueness, a non-blocking sort, fewer fields), and take the best; a top-level `$or`
whose every branch is indexable becomes a union of index scans. The engine may still compare the
leading candidates by a short trial run (`rank_by_trial`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ..errors import CommandError, ErrorCode
from .bounds import compute_bounds
from .implication import filter_implies


@dataclass
class IndexPlan:
    index: Any                 # catalog IndexMeta
    bounds: Any                # planner.bounds.IndexBounds
    direction: int = 1
    provides_sort: bool = False
    score: tuple = ()


@dataclass
class QueryPlan:
    kind: str                  # "COLLSCAN", "IXSCAN" or "OR"
    scans: list = field(default_factory=list)   # list[IndexPlan]
    provides_sort: bool = False
    direction: int = 1         # COLLSCAN direction ($natural)
    filter: Optional[dict] = None  # the filter the plan must still apply (None: none)


def plan_query(indexes: list, filter_spec: dict, sort: Optional[list] = None,
               hint: Any = None) -> tuple[QueryPlan, list[QueryPlan]]:
    """(winning plan, rejected plans) for a filter, a sort [(field, dir)] and an optional hint."""
    sort = sort or []
    if hint not in (None, "", {}):
        return _hinted(indexes, filter_spec, sort, hint), []
    candidates = [p for p in (_index_plan(ix, filter_spec, sort) for ix in indexes if _usable(ix, filter_spec))
                  if p is not None]
    candidates.sort(key=lambda p: p.score, reverse=True)
    plans = [QueryPlan("IXSCAN", [p], p.provides_sort) for p in candidates]
    or_plan = _or_plan(indexes, filter_spec)
    if or_plan is not None and (not plans or plans[0].scans[0].score[:2] == (0, 0)):
        plans.insert(0, or_plan)
    collscan = QueryPlan("COLLSCAN", direction=1)
    if not plans:
        return collscan, []
    best = plans[0]
    if best.kind == "IXSCAN" and not _narrows(best.scans[0]) and not best.provides_sort:
        return collscan, plans
    return best, plans[1:]


def _usable(ix, filter_spec: dict) -> bool:
    if ix.options.get("hidden"):
        return False
    partial = ix.partial
    if partial is not None and not filter_implies(filter_spec, partial):
        return False
    return True


def _index_plan(ix, filter_spec: dict, sort: list) -> Optional[IndexPlan]:
    pattern = ix.pattern
    if any(d in ("text", "2d", "2dsphere", "geoHaystack") for _, d in pattern):
        return None
    bounds = compute_bounds(pattern, filter_spec, multikey_paths=ix.multikey_paths)
    n_points, bounded_next = _prefix_shape(bounds)
    if ix.sparse and _may_need_missing(bounds):
        return None
    direction, provides_sort = _sort_direction(ix, bounds, sort)
    if n_points == 0 and not bounded_next and not provides_sort:
        return None
    full_point = n_points == len(pattern) and ix.unique
    score = (n_points, int(bounded_next), int(full_point), int(provides_sort), -len(pattern))
    return IndexPlan(ix, bounds, direction, provides_sort, score)


def _narrows(plan: IndexPlan) -> bool:
    return plan.score[0] > 0 or plan.score[1] > 0


def _prefix_shape(bounds) -> tuple[int, bool]:
    """(leading fields bounded to points only, whether the next field is bounded at all)."""
    n = 0
    for i in range(len(bounds.fields)):
        if bounds.is_point(i):
            n += 1
            continue
        return n, not bounds.is_full(i)
    return n, False


def _may_need_missing(bounds) -> bool:
    """A sparse index lacks documents missing its fields: unusable if the bounds admit null."""
    return any(bounds.admits_null(i) for i in range(len(bounds.fields)))


def _sort_direction(ix, bounds, sort: list) -> tuple[int, bool]:
    if not sort:
        return 1, False
    pattern = ix.pattern
    if any(not isinstance(d, (int, float)) for _, d in pattern):
        return 1, False
    fields = [f for f, _ in pattern]
    first = sort[0][0]
    if first not in fields:
        return 1, False
    k = fields.index(first)
    if any(not bounds.is_single_point(i) for i in range(k)):
        return 1, False
    if k + len(sort) > len(pattern):
        return 1, False
    signs = []
    for (sf, sd), (f, d) in zip(sort, pattern[k:k + len(sort)]):
        if sf != f or f in ix.multikey_paths or any(f.startswith(m + ".") or m.startswith(f + ".")
                                                     for m in ix.multikey_paths):
            return 1, False
        signs.append(1 if (sd > 0) == (d > 0) else -1)
    if all(s == 1 for s in signs):
        return 1, True
    if all(s == -1 for s in signs):
        return -1, True
    return 1, False


def _hinted(indexes: list, filter_spec: dict, sort: list, hint: Any) -> QueryPlan:
    if isinstance(hint, dict) and list(hint) == ["$natural"]:
        return QueryPlan("COLLSCAN", direction=1 if hint["$natural"] >= 0 else -1)
    for ix in indexes:
        if (isinstance(hint, str) and ix.name == hint) or (
                isinstance(hint, dict) and list(ix.key.items()) == list(hint.items())):
            bounds = compute_bounds(ix.pattern, filter_spec, multikey_paths=ix.multikey_paths)
            direction, provides_sort = _sort_direction(ix, bounds, sort)
            return QueryPlan("IXSCAN", [IndexPlan(ix, bounds, direction, provides_sort)], provides_sort)
    raise CommandError(ErrorCode.BadValue, "hint provided does not correspond to an existing index")


def _or_plan(indexes: list, filter_spec: dict) -> Optional[QueryPlan]:
    """A union of index scans when the filter is (essentially) one `$or` of indexable branches."""
    branches = filter_spec.get("$or") if isinstance(filter_spec, dict) else None
    if not isinstance(branches, list) or not branches or len(branches) > 64:
        return None
    scans = []
    for branch in branches:
        if not isinstance(branch, dict):
            return None
        best = None
        for ix in indexes:
            if not _usable(ix, branch):
                continue
            p = _index_plan(ix, branch, [])
            if p is not None and _narrows(p) and (best is None or p.score > best.score):
                best = p
        if best is None:
            return None
        scans.append(best)
    return QueryPlan("OR", scans)
