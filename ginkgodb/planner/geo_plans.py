"""The planner's side of the 2dsphere and 2d indexes: scans over cell (or geohash) ranges.

A `$geoWithin`/`$geoIntersects` on the index's geo field becomes the byte ranges of the query
region's covering (query.geo: `s2keys.region_intervals`, `geohash.region_ranges`); the exact
predicate stays in the FETCH filter, so the scan only has to return a superset. Fields before
the geo field (compound indexes) must be bound to points (equality, `$in`): their encodings
prefix every range. Near queries are not planned here: the engine's GEO_NEAR stage asks the
index for the ranges of each annulus (`near_ranges`) as it goes.

The access methods (engine/access/geo2dsphere.py, geo2d.py) inherit `GeoPlanning` and supply
`geo_field`, `ranges_for_region` and `explain_intervals`.
"""
from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from typing import Any, Optional

from ..bsonutil.keycodec import invert
from ..errors import CommandError, ErrorCode
from ..query.geo import GeoPredicate, parse_geo_predicate
from .bounds import compute_bounds
from .implication import filter_implies
from .key_ranges import MAX_RANGES, ByteRange, prefix_end
from .plans import IndexPlan

GEO_PREDICATES = ("$geoWithin", "$within", "$geoIntersects")
NEAR_OPERATORS = ("$near", "$nearSphere", "$geoNear")


def _field_conditions(filt: Any) -> Iterator[tuple[str, Mapping]]:
    """(path, operator document) of the filter's top level and of its top-level `$and`s."""
    if not isinstance(filt, Mapping):
        return
    for key, value in filt.items():
        if key == "$and" and isinstance(value, list):
            for clause in value:
                yield from _field_conditions(clause)
        elif not key.startswith("$") and isinstance(value, Mapping) and value:
            yield key, value


def geo_predicates(filt: Any, field: str) -> list[GeoPredicate]:
    """The $geoWithin/$geoIntersects predicates an index on `field` may answer."""
    out = []
    for path, cond in _field_conditions(filt):
        if path != field:
            continue
        for op, arg in cond.items():
            if op in GEO_PREDICATES:
                out.append(parse_geo_predicate({op: arg}))
    return out


def near_conditions(filt: Any) -> list[tuple[str, Mapping]]:
    """The near operands of a filter's top level: [(path, whole operator document)]."""
    out = []
    for path, cond in _field_conditions(filt):
        first = next(iter(cond))
        if first in NEAR_OPERATORS:
            out.append((path, cond))
    return out


def mentions_near(filt: Any) -> bool:
    """Does a near operator appear anywhere in the filter (mongod requires it at the top)?"""
    if isinstance(filt, Mapping):
        return any(k in NEAR_OPERATORS or mentions_near(v) for k, v in filt.items())
    if isinstance(filt, list):
        return any(mentions_near(v) for v in filt)
    return False


def check_near_placement(filt: Any) -> Optional[tuple[str, Mapping]]:
    """The one top-level near operand of a filter, or None; mongod's errors otherwise."""
    found = near_conditions(filt)
    if len(found) > 1:
        raise CommandError(ErrorCode.BadValue, "Too many geoNear expressions")
    if not found:
        if mentions_near(filt):
            raise CommandError(ErrorCode.BadValue, "geoNear must be top-level expr")
        return None
    return found[0]


class GeoBounds:
    """The byte ranges of a geo scan and their explain form; never exact (FETCH re-checks)."""

    exact = False

    def __init__(self, ranges: list[ByteRange], explain: dict) -> None:
        self._ranges = ranges
        self._explain = explain

    def key_ranges(self) -> list[ByteRange]:
        return list(self._ranges)

    def to_explain(self) -> dict:
        return self._explain


class GeoPlanning:
    """Mixed into a geo access method; `self.meta` is the catalog IndexMeta."""

    meta: Any
    geo_field: str

    def ranges_for_region(self, predicate: GeoPredicate) -> Optional[list[tuple[int, int]]]:
        """Inclusive ranges of the geo component for a region, None when this kind cannot
        bound it."""
        raise NotImplementedError

    def encode_interval(self, lo: int, hi: int) -> tuple[bytes, bytes]:
        """The encoded geo components of an inclusive range's ends."""
        raise NotImplementedError

    def explain_intervals(self, intervals: list[tuple[int, int]]) -> list[str]:
        raise NotImplementedError

    # -- the planner's questions --------------------------------------------------------------
    def usable(self, query: Any) -> bool:
        ix = self.meta
        if ix.options.get("hidden"):
            return False
        return ix.partial is None or filter_implies(query, ix.partial)

    def plan(self, query: Any, sort: list) -> Optional[IndexPlan]:
        bounds = self._bounds(query)
        if bounds is None:
            return None
        score = (0, 1, 0, 0, -len(self.meta.key))
        return IndexPlan(self.meta, bounds, 1, False, score)

    def hinted(self, query: Any, sort: list) -> IndexPlan:
        bounds = self._bounds(query)
        if bounds is None:
            bounds = GeoBounds([(b"", None)], {f: ["[MinKey, MaxKey]"] for f in self.meta.key})
        return IndexPlan(self.meta, bounds, 1, False)

    def explain_bounds(self, query: Any) -> dict:
        bounds = self._bounds(query)
        return bounds.to_explain() if bounds is not None else {}

    # -- bounds -------------------------------------------------------------------------------
    def prefix_keys(self, query: Any) -> Optional[tuple[list[bytes], dict]]:
        """Encoded point prefixes of the fields before the geo field (and their explain), or
        None when one of them is not bound to points."""
        fields = [f for f, _ in self.meta.pattern]
        k = fields.index(self.geo_field)
        if k == 0:
            return [b""], {}
        pattern = self.meta.pattern[:k]
        bounds = compute_bounds(pattern, query, multikey_paths=self.meta.multikey_paths)
        per_field = []
        for i, (_, direction) in enumerate(pattern):
            if not bounds.is_point(i):
                return None
            keys = [iv.low.key for iv in bounds.fields[i].intervals]
            per_field.append([invert(key) if direction < 0 else key for key in keys])
        prefixes = [b"".join(p) for p in itertools.product(*per_field)]
        if len(prefixes) > MAX_RANGES:
            return None
        explain = {name: bounds.fields[i].to_explain() for i, (name, _) in enumerate(pattern)}
        return sorted(prefixes), explain

    def ranges_with_prefixes(self, prefixes: list[bytes],
                             intervals: list[tuple[int, int]]) -> list[ByteRange]:
        out: list[ByteRange] = []
        for prefix in prefixes:
            for lo, hi in intervals:
                lo_key, hi_key = self.encode_interval(lo, hi)
                out.append((prefix + lo_key, prefix_end(prefix + hi_key)))
        return out

    def _bounds(self, query: Any) -> Optional[GeoBounds]:
        filt = getattr(query, "filter", query)
        predicates = geo_predicates(filt, self.geo_field)
        if not predicates:
            return None
        prefix = self.prefix_keys(query)
        if prefix is None:
            return None
        prefixes, explain = prefix
        best: Optional[list[tuple[int, int]]] = None
        for predicate in predicates:
            intervals = self.ranges_for_region(predicate)
            if intervals is not None and (best is None or len(intervals) < len(best)):
                best = intervals
        if best is None:
            return None
        explain = dict(explain)
        explain[self.geo_field] = self.explain_intervals(best)
        for name in self.meta.key:
            explain.setdefault(name, ["[MinKey, MaxKey]"])
        explain = {name: explain[name] for name in self.meta.key}
        return GeoBounds(self.ranges_with_prefixes(prefixes, best), explain)
