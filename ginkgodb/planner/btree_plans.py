"""The planner's side of a B-tree index (single, compound, multikey, hashed): its bounds for a
query, whether its order gives the sort, and how well it narrows the scan.

Index access methods (engine/access/) inherit this; the planner asks each index through
`plan`, `hinted` and `usable`, so it never needs to know an index's kind.
"""
from __future__ import annotations

from typing import Any, Optional

from .bounds import compute_bounds
from .implication import filter_implies
from .plans import IndexPlan


class BtreePlanning:
    """Mixed into an access method; `self.meta` is the catalog IndexMeta."""

    meta: Any

    def usable(self, query: Any) -> bool:
        """Hidden indexes never serve; partial ones only queries that imply their filter."""
        ix = self.meta
        if ix.options.get("hidden"):
            return False
        partial = ix.partial
        return partial is None or filter_implies(query, partial)

    def plan(self, query: Any, sort: list) -> Optional[IndexPlan]:
        """A scan of this index for the query, or None when it neither narrows nor sorts."""
        ix = self.meta
        pattern = ix.pattern
        bounds = compute_bounds(pattern, query, multikey_paths=ix.multikey_paths)
        n_points, bounded_next = _prefix_shape(bounds)
        if ix.sparse and len(pattern) == 1 and _requires_present(query, pattern[0][0]):
            bounded_next = bounded_next or n_points == 0  # {f: {$exists: true}}: the sparse index
            #                                               holds exactly those documents
        elif ix.sparse and _may_need_missing(bounds):
            return None
        direction, provides_sort = sort_direction(ix, bounds, sort)
        if n_points == 0 and not bounded_next and not provides_sort:
            return None
        full_point = n_points == len(pattern) and ix.unique
        score = (n_points, int(bounded_next), int(full_point), int(provides_sort), -len(pattern))
        return IndexPlan(ix, bounds, direction, provides_sort, score)

    def hinted(self, query: Any, sort: list) -> IndexPlan:
        """The scan a hint forces, whatever its bounds."""
        ix = self.meta
        bounds = compute_bounds(ix.pattern, query, multikey_paths=ix.multikey_paths)
        direction, provides_sort = sort_direction(ix, bounds, sort)
        return IndexPlan(ix, bounds, direction, provides_sort)

    def explain_bounds(self, query: Any) -> dict:
        """indexBounds for explain of a scan planned without bounds (the shortcut planner)."""
        ix = self.meta
        return compute_bounds(ix.pattern, query, multikey_paths=ix.multikey_paths).to_explain()


class PlannedIndex(BtreePlanning):
    """A catalog entry seen only by the planner (for callers without access methods)."""

    def __init__(self, meta: Any) -> None:
        self.meta = meta


def narrows(plan: IndexPlan) -> bool:
    return plan.score[0] > 0 or plan.score[1] > 0


def _prefix_shape(bounds: Any) -> tuple[int, bool]:
    """(leading fields bounded to points only, whether the next field is bounded at all)."""
    n = 0
    for i in range(len(bounds.fields)):
        if bounds.is_point(i):
            n += 1
            continue
        return n, not bounds.is_full(i)
    return n, False


def _requires_present(query: Any, path: str) -> bool:
    """Whether the filter's top level requires `path` to exist ({path: {$exists: true}})."""
    from .translate import _truthy
    return any(a.path == path and a.op == "$exists" and len(a.scopes) == 1 and _truthy(a.operand)
               for a in query.predicates.atoms)


def _may_need_missing(bounds: Any) -> bool:
    """A sparse index lacks documents missing its fields: unusable if the bounds admit null."""
    return any(bounds.admits_null(i) for i in range(len(bounds.fields)))


def sort_direction(ix: Any, bounds: Any, sort: list) -> tuple[int, bool]:
    """(scan direction, whether that scan yields `sort`'s order)."""
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
