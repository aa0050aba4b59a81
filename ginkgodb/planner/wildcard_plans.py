"""The planner's side of a wildcard index: bounds on `($_path, value)` for one queried path.

mongod's rules (query_planner_wildcard_helpers): a wildcard index serves an equality, range,
`$in`, `$regex`, `$type` or `$exists: true` predicate on a path the index covers, as a scan of
that one path (`$_path` a point, the value bounded by the predicates on the path) or, for
`$exists: true`, of the path and everything below it (`["p", "p"]`, `["p.", "p/")`). It does
not serve predicates whose bounds reach null (missing fields have no key: `{p: null}`, `$ne`,
`$exists: false`, `$not`), objects or arrays (objects are keyed by their leaves), or paths with
positional components. Of several eligible paths the most selective one is scanned; FETCH
re-applies the whole filter (the keys of an array path hold every element). Sorting: a
single-field sort on the scanned path, when the path is not multikey and the scan is of that
path alone. The plan's index is the catalog entry as mongod explains it, the key pattern
`{$_path: 1, <path>: 1}`.
"""
from __future__ import annotations

from typing import Any, Optional

from ..bsonutil import types as T
from ..errors import CommandError, ErrorCode
from ..query.wildcard_keys import WildcardProjection
from . import intervals as I
from .bounds import FieldBounds, IndexBounds, compute_bounds
from .btree_plans import BtreePlanning
from .plans import IndexPlan

PATH_FIELD = "$_path"
_COMPOSITE = [I.bracket_interval(T.BRACKET_OBJECT), I.bracket_interval(T.BRACKET_ARRAY)]


class WildcardPlanning(BtreePlanning):
    """Mixed into the wildcard access method (`self.meta`, `self.projection`)."""

    meta: Any
    projection: WildcardProjection

    def plan(self, query: Any, sort: list) -> Optional[IndexPlan]:
        best: Optional[IndexPlan] = None
        for path in _paths(query):
            p = self._path_plan(query, path, sort)
            if p is not None and (best is None or p.score > best.score):
                best = p
        return best

    def hinted(self, query: Any, sort: list) -> IndexPlan:
        """The best path's scan; without an eligible predicate mongod finds no expanded index
        matching the hint (the index holds no entry for documents lacking the paths)."""
        p = self.plan(query, sort)
        if p is None:
            raise CommandError(ErrorCode.BadValue, "hint provided does not correspond to an existing index")
        return p

    def _path_plan(self, query: Any, path: str, sort: list) -> Optional[IndexPlan]:
        if any(part.isdigit() for part in path.split(".")) or not self.projection.covers(path):
            return None
        meta = self.meta
        multikey = frozenset(m for m in meta.multikey_paths if m == path or path.startswith(m + "."))
        value = compute_bounds([(path, 1)], query, multikey_paths=multikey).fields[0]
        exists = _requires_exists(query, path)
        if I.is_full(value.intervals):
            if not exists:
                return None
            paths = [I.point(path), I.make(path + ".", True, path + "/", False)]
        elif any(I.contains(iv, I.NULL.key) for iv in value.intervals) or I.intersect(value.intervals, _COMPOSITE):
            return None
        else:
            paths = [I.point(path)]
        order = -1 if meta.pattern[0][1] < 0 else 1
        view = meta.evolve(key={PATH_FIELD: 1, path: order}, multikey_paths=multikey)
        bounds = IndexBounds([FieldBounds(PATH_FIELD, 1, paths), FieldBounds(path, order, value.intervals)], False)
        direction, provides_sort = 1, False
        if (len(sort) == 1 and sort[0][0] == path and not multikey and len(paths) == 1):
            direction, provides_sort = (1 if (sort[0][1] > 0) == (order > 0) else -1), True
        points = all(iv.is_point() for iv in value.intervals) and not I.is_full(value.intervals)
        score = (1 if points else 0, 0 if points else 1, 0, int(provides_sort), -2)
        return IndexPlan(view, bounds, direction, provides_sort, score)


def _paths(query: Any) -> list[str]:
    """The queried paths, in filter order, once each."""
    seen: dict[str, None] = {}
    for atom in query.predicates.atoms:
        if not atom.path.startswith("$"):
            seen.setdefault(atom.path)
    return list(seen)


def _requires_exists(query: Any, path: str) -> bool:
    from .translate import _truthy
    return any(a.path == path and a.op == "$exists" and _truthy(a.operand) for a in query.predicates.atoms)
