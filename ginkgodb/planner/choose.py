"""Choosing how to run a query: which index (if any), its bounds, and whether it yields the sort.

Rules, in the spirit of mongod's planner: ask every index's access method for its plan (bounds
the filter narrows, or an order that gives the requested sort), rank them (equality prefix
length, a bounded range after it, uniqueness, a non-blocking sort, fewer fields), and take the
best; a top-level `$or` whose every branch is indexable becomes a union of index scans. The
engine may still compare the leading candidates by a short trial run.

Indexes are access methods (`usable`, `plan`, `hinted`, `meta`): the planner never asks an
index's kind. Catalog entries given instead are planned as B-tree indexes.
"""
from __future__ import annotations

from typing import Any, Optional

from ..errors import CommandError, ErrorCode
from .btree_plans import PlannedIndex, narrows
from .parsed_query import as_query
from .plans import IndexPlan, QueryPlan

__all__ = ["IndexPlan", "QueryPlan", "plan_query"]


def _planned(indexes: list) -> list:
    return [ix if hasattr(ix, "plan") else PlannedIndex(ix) for ix in indexes]


def plan_query(indexes: list, query: Any, sort: Optional[list] = None,
               hint: Any = None) -> tuple[QueryPlan, list[QueryPlan]]:
    """(winning plan, rejected plans) for a query (a ParsedQuery or a filter), a sort
    [(field, dir)] and an optional hint."""
    sort = sort or []
    query = as_query(query)
    indexes = _planned(indexes)
    if hint not in (None, "", {}):
        return _hinted(indexes, query, sort, hint), []
    candidates = [p for p in (ix.plan(query, sort) for ix in indexes if ix.usable(query)) if p is not None]
    candidates.sort(key=lambda p: p.score, reverse=True)
    plans = [QueryPlan("IXSCAN", [p], p.provides_sort) for p in candidates]
    or_plan = _or_plan(indexes, query)
    if or_plan is not None and (not plans or plans[0].scans[0].score[:2] == (0, 0)):
        plans.insert(0, or_plan)
    collscan = QueryPlan("COLLSCAN", direction=1)
    if not plans:
        return collscan, []
    best = plans[0]
    if best.kind == "IXSCAN" and not narrows(best.scans[0]) and not best.provides_sort:
        return collscan, plans
    return best, plans[1:]


def _hinted(indexes: list, query: Any, sort: list, hint: Any) -> QueryPlan:
    if isinstance(hint, dict) and list(hint) == ["$natural"]:
        return QueryPlan("COLLSCAN", direction=1 if hint["$natural"] >= 0 else -1)
    for ix in indexes:
        meta = ix.meta
        if (isinstance(hint, str) and meta.name == hint) or (
                isinstance(hint, dict) and list(meta.key.items()) == list(hint.items())):
            p = ix.hinted(query, sort)
            return QueryPlan("IXSCAN", [p], p.provides_sort)
    raise CommandError(ErrorCode.BadValue, "hint provided does not correspond to an existing index")


def _or_plan(indexes: list, query: Any) -> Optional[QueryPlan]:
    """A union of index scans when the filter is (essentially) one `$or` of indexable branches."""
    branches = query.or_branches
    if not branches or len(branches) > 64:
        return None
    scans = []
    for branch in branches:
        if branch is None:
            return None
        best = None
        for ix in indexes:
            if not ix.usable(branch):
                continue
            p = ix.plan(branch, [])
            if p is not None and narrows(p) and (best is None or p.score > best.score):
                best = p
        if best is None:
            return None
        scans.append(best)
    return QueryPlan("OR", scans)
