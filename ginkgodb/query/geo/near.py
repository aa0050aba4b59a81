"""Near search: documents in distance order from index scans over growing annuli.

As mongod's GEO_NEAR_2DSPHERE stage: first estimate the data's density by scanning the
center's cell and its vertex neighbours, from a fine level to coarser ones, until something is
found; the search step is then three times that cell's edge. Each round scans the covering of
the next annulus [inner, outer), keeps the documents whose exact distance falls in it, sorts
them and yields them; the step doubles while a round returns fewer than 300 documents and
halves above 600. So a query that stops after ten documents touches only the keys of the first
few small annuli.

The stage is pure: `scan(ranges)` is the caller's index scan (it yields record ids for keys in
the given ranges) and `distance(rid)` the caller's exact distance of a record (None when it has
no usable geometry), in the same units as the radii here.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Iterator

from . import geohash, s2
from .s2keys import S2IndexParams, cells_to_intervals, merge_intervals

Scan = Callable[[list[tuple[int, int]]], Iterable[Hashable]]
Distance = Callable[[Hashable], "float | None"]

GROW_BELOW = 300
SHRINK_ABOVE = 600
# S2 query coverings of annuli (same knobs as other 2dsphere query coverings).
_NEAR_MAX_CELLS = 20
_NEAR_FINEST = 23


def _rounds(scan: Scan, distance: Distance, ranges_for: Callable[[float, float], list],
            first_step: float, min_distance: float, max_distance: float,
            full: float) -> Iterator[tuple[float, Hashable]]:
    """The annulus loop shared by the spherical and the flat search."""
    limit = min(max_distance, full)
    inner = min_distance
    step = first_step
    seen: set = set()
    while True:
        outer = min(inner + step, limit)
        last = outer >= limit
        found: list[tuple[float, Hashable]] = []
        for rid in scan(ranges_for(inner, outer)):
            if rid in seen:
                continue
            d = distance(rid)
            if d is None or d < min_distance or d > max_distance:
                continue
            if inner <= d and (d < outer or (last and d <= outer)):
                seen.add(rid)
                found.append((d, rid))
        found.sort(key=lambda pair: pair[0])
        yield from found
        if last:
            return
        if len(found) < GROW_BELOW:
            step *= 2
        elif len(found) > SHRINK_ABOVE:
            step /= 2
        inner = outer


# --- 2dsphere -------------------------------------------------------------------------------

def _s2_density_step(center, scan: Scan, params: S2IndexParams) -> float:
    """Three edges of the finest level whose cells around the center hold a key (radians)."""
    leaf = s2.S2.S2CellId(center)
    level = max(0, params.finest_level - 1)
    while level > 0:
        neighbours = [c.id() for c in leaf.GetVertexNeighbors(level)]
        # Only the neighbours' descendants: a coarser stored cell (an ancestor) would also say
        # "something is here", but the step only sizes the first annulus (every round scans the
        # ancestors too, so results never depend on it), and four ranges are far cheaper.
        if any(True for _ in scan(merge_intervals(_descendant_ranges(neighbours)))):
            break
        level -= 1
    return 3 * s2.avg_edge(level)


def _descendant_ranges(cell_ids: list[int]) -> list[tuple[int, int]]:
    """Sorted inclusive signed ranges of the cells' descendants (S2CellId range_min/max)."""
    out = []
    for cid in cell_ids:
        lsb = cid & -cid
        out.append((s2.to_signed(cid - (lsb - 1)), s2.to_signed(cid + (lsb - 1))))
    out.sort()
    return out


def _annulus_ranges(center, params: S2IndexParams) -> Callable[[float, float], list]:
    coverer = s2.S2.S2RegionCoverer()
    coverer.set_min_level(0)
    coverer.set_max_level(_NEAR_FINEST)
    coverer.set_max_cells(_NEAR_MAX_CELLS)

    def ranges(inner: float, outer: float) -> list:
        outer_cap = s2.cap(center, outer)
        # Slightly smaller than the inner disc, so a cell holding a point at exactly `inner`
        # (returned by this round, not the last) is never skipped.
        inner_cap = s2.cap(center, inner * 0.999) if inner > 0 else None
        cells = []
        for cell_id in coverer.GetCovering(outer_cap):
            # A cell inside the inner disc holds only what an earlier round returned.
            if inner_cap is not None and inner_cap.Contains(s2.S2.S2Cell(cell_id)):
                continue
            cells.append(cell_id.id())
        return merge_intervals(cells_to_intervals(cells, params))
    return ranges


def near_2dsphere(center, scan: Scan, distance: Distance, params: S2IndexParams,
                  min_distance: float = 0.0, max_distance: float = math.inf
                  ) -> Iterator[tuple[float, Hashable]]:
    """(distance, rid) pairs in increasing distance; radii and distances in radians."""
    step = _s2_density_step(center, scan, params)
    return _rounds(scan, distance, _annulus_ranges(center, params), step, min_distance,
                   max_distance, math.pi)


# --- 2d -------------------------------------------------------------------------------------

def _flat_density_step(x: float, y: float, scan: Scan, params: geohash.TwoDParams) -> float:
    level = params.bits
    while level > 0:
        edge = params.cell_edge(level)
        box = (x - edge, y - edge, x + edge, y + edge)
        if any(True for _ in scan(geohash.box_ranges(box, params))):
            break
        level -= 1
    return 3 * params.cell_edge(level)


def near_2d(x: float, y: float, scan: Scan, distance: Distance, params: geohash.TwoDParams,
            min_distance: float = 0.0, max_distance: float = math.inf
            ) -> Iterator[tuple[float, Hashable]]:
    """(distance, rid) pairs in increasing flat distance (coordinate units) on a 2d index."""
    step = _flat_density_step(x, y, scan, params)

    def ranges(inner: float, outer: float) -> list:
        return geohash.box_ranges((x - outer, y - outer, x + outer, y + outer), params)
    full = math.hypot(params.max - params.min, params.max - params.min)
    return _rounds(scan, distance, ranges, step, min_distance, max_distance, full)


# --- reference ------------------------------------------------------------------------------

def near_brute_force(distances: Iterable[tuple[Hashable, float | None]],
                     min_distance: float = 0.0, max_distance: float = math.inf
                     ) -> list[tuple[float, Hashable]]:
    """Every (distance, rid) within [min, max], sorted: what a collection scan would give."""
    out = [(d, rid) for rid, d in distances
           if d is not None and min_distance <= d <= max_distance]
    out.sort(key=lambda pair: pair[0])
    return out
