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

import bisect
import math
import threading
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Iterator
from operator import itemgetter
from typing import Any

from . import geohash, s2
from .s2keys import S2IndexParams, cells_to_intervals, descendant_spans, merge_intervals

Scan = Callable[[list[tuple[int, int]]], Iterable[Hashable]]
Distance = Callable[[Hashable], "float | None"]
Distances = Callable[[list], list]                   # rids -> their distances (or None), in order
Exists = Callable[[list[tuple[int, int]]], bool]   # does any key fall in these ranges?
Sample = Callable[[int, int, int], list]             # (lo, hi, n) -> first ~n cell ids stored

GROW_BELOW = 300
SHRINK_ABOVE = 600
# S2 query coverings of annuli (same knobs as other 2dsphere query coverings).
_NEAR_MAX_CELLS = 12
_NEAR_FINEST = 23


def first_step_for(step: float, wanted: int) -> float:
    """The first annulus' width when the caller needs only `wanted` results: mongod's
    density step returns about 50 points of evenly spread data in its first round, so a small
    `wanted` starts on a proportionally smaller disc (area ~ count)."""
    if wanted <= 0:
        return step
    return step * min(1.0, math.sqrt(wanted / _FIRST_ROUND_POINTS))


_FIRST_ROUND_POINTS = 20
_first = itemgetter(0)
_second = itemgetter(1)
_MARGIN = 2.0   # grow to the radius expected to hold twice what is still wanted


def _rounds(scan: Scan, distances: Distances, ranges_for: Callable[[float, float], list],
            first_step: float, min_distance: float, max_distance: float,
            full: float, wanted: int = 0, disjoint: bool = False,
            by_round: bool = False) -> Iterator[Any]:
    """The annulus loop shared by the spherical and the flat search.

    Each key range is scanned once over the whole search: a round scans only the parts of its
    covering no earlier round read, and the records an earlier round read but left for later
    (farther than its annulus) wait in `pending` with their distances. With `wanted` (the
    caller's skip + limit), the radius grows to where the density seen so far puts that many
    results; the rounds are exact annuli, so the steps change only how much is read. A round's
    new records are measured in one `distances` call (the caller fetches them together);
    `disjoint`: `ranges_for` gives sorted, disjoint ranges already; `by_round`: each round's
    results come as one list (never empty) rather than one by one."""
    limit = min(max_distance, full)
    inner = min_distance
    if wanted < 0:   # the first step is already sized for -wanted results
        wanted = -wanted
        step = first_step
    else:
        step = first_step_for(first_step, wanted)
    done: set = set()                      # returned, or without a usable distance
    pending: dict[Hashable, float] = {}    # read, farther than the rounds so far
    scanned = _Scanned()
    total = 0
    # no distance bound a distance can fail (they are never negative; NaN fails neither test)
    unbounded = min_distance <= 0 and max_distance == math.inf
    while True:
        outer = min(inner + step, limit)
        last = outer >= limit
        fresh = scanned.take(ranges_for(inner, outer), disjoint)
        if fresh:
            new = list(dict.fromkeys(scan(fresh)))
            if done or pending:
                new = [rid for rid in new if rid not in done and rid not in pending]
            ds = distances(new)
            if unbounded and None not in ds:   # every distance is within [0, pi]: all wait
                pending.update(zip(new, ds))
            else:
                for rid, d in zip(new, ds):
                    if d is None or d < min_distance or d > max_distance:
                        done.add(rid)
                    else:
                        pending[rid] = d
        if last:
            found = [(d, rid) for rid, d in pending.items() if d <= outer]
        else:
            found = [(d, rid) for rid, d in pending.items() if d < outer]
        if found:
            taken = list(map(_second, found))
            done.update(taken)
            if len(taken) == len(pending):
                pending.clear()
            else:
                deque(map(pending.__delitem__, taken), 0)   # each one deleted, at C speed
        found.sort(key=_first)   # by distance only, stable (ties keep their reading order)
        if not by_round:
            yield from found
        elif found:
            yield found
        if last:
            return
        total += len(found)
        if 0 < total < wanted:   # the caller wants more: aim at the radius that holds them
            target = outer * math.sqrt(_MARGIN * wanted / total)
            step = max(target - outer, step / 2)
        elif len(found) < GROW_BELOW:
            step *= 2
        elif len(found) > SHRINK_ABOVE:
            step /= 2
        inner = outer


class _Scanned:
    """The inclusive integer ranges read so far, merged and sorted."""

    __slots__ = ("ranges",)

    def __init__(self) -> None:
        self.ranges: list[tuple[int, int]] = []

    def take(self, wanted: list, disjoint: bool = False) -> list[tuple[int, int]]:
        """The parts of `wanted` (inclusive ranges; `disjoint`: sorted and disjoint already)
        not read yet; they count as read."""
        if not disjoint:
            wanted = merge_intervals(sorted(wanted))
        if not self.ranges:   # the first round: everything is fresh
            self.ranges = wanted
            return list(wanted)
        else:
            fresh = []
            starts = [lo for lo, _ in self.ranges]
            for lo, hi in wanted:
                i = max(0, bisect.bisect_right(starts, lo) - 1)
                cur = lo
                while i < len(self.ranges) and cur <= hi:
                    s_lo, s_hi = self.ranges[i]
                    if s_hi < cur:
                        i += 1
                        continue
                    if s_lo > hi:
                        break
                    if s_lo > cur:
                        fresh.append((cur, s_lo - 1))
                    cur = max(cur, s_hi + 1)
                    i += 1
                if cur <= hi:
                    fresh.append((cur, hi))
        if fresh:
            self.ranges = merge_intervals(sorted(self.ranges + fresh))
        return fresh


# --- 2dsphere -------------------------------------------------------------------------------

def _s2_density_step(center, exists: Exists, params: S2IndexParams) -> float:
    """Three edges of the finest level whose cells around the center hold a key (radians)."""
    leaf = s2.S2.S2CellId(center)
    level = max(0, params.finest_level - 1)
    while level > 0:
        neighbours = [c.id() for c in leaf.GetVertexNeighbors(level)]
        # Only the neighbours' descendants: a coarser stored cell (an ancestor) would also say
        # "something is here", but the step only sizes the first annulus (every round scans the
        # ancestors too, so results never depend on it), and four ranges are far cheaper.
        if exists(merge_intervals(_descendant_ranges(neighbours))):
            break
        level -= 1
    return 3 * s2.avg_edge(level)


def _exists_by_scan(scan: Scan) -> Exists:
    return lambda ranges: any(True for _ in scan(ranges))


def _descendant_ranges(cell_ids: list[int]) -> list[tuple[int, int]]:
    """Sorted inclusive signed ranges of the cells' descendants (S2CellId range_min/max)."""
    out = []
    for cid in cell_ids:
        lsb = cid & -cid
        out.append((s2.to_signed(cid - (lsb - 1)), s2.to_signed(cid + (lsb - 1))))
    out.sort()
    return out


_coverers = threading.local()


def _coverer(finest: int):
    """The annulus coverer for an index's finest level, made once per thread (each costs four
    bindings calls to set up; GetCovering keeps no state between calls)."""
    made = getattr(_coverers, "by_level", None)
    if made is None:
        made = _coverers.by_level = {}
    coverer = made.get(finest)
    if coverer is None:
        coverer = s2.S2.S2RegionCoverer()
        coverer.set_min_level(0)
        # finer cells than the index's finest level narrow nothing: keys are never finer
        coverer.set_max_level(min(_NEAR_FINEST, finest))
        coverer.set_max_cells(_NEAR_MAX_CELLS)
        made[finest] = coverer
    return coverer


# unsigned covering cell ids -> the strict ancestors (signed ids) some entry holds exactly
HeldAncestors = Callable[[list], list]


def _annulus_ranges(center, params: S2IndexParams,
                    held_ancestors: HeldAncestors | None = None) -> Callable[[float, float], list]:
    """A round's ranges: the annulus covering's descendant ranges and its ancestors' single
    values; with `held_ancestors`, only the ancestors some entry holds (the others read
    nothing)."""
    coverer = _coverer(params.finest_level)

    def ranges(inner: float, outer: float) -> list:
        covering = coverer.GetCovering(s2.cap(center, outer))
        if inner > 0:
            # Slightly smaller than the inner disc, so a cell holding a point at exactly `inner`
            # (returned by this round, not the last) is never skipped.
            inner_cap = s2.cap(center, inner * 0.999)
            # A cell inside the inner disc holds only what an earlier round returned.
            cells = [c.id() for c in covering if not inner_cap.Contains(s2.S2.S2Cell(c))]
        else:
            cells = [c.id() for c in covering]
        if held_ancestors is None:
            return bridge_single_gaps(cells_to_intervals(cells, params))
        spans = descendant_spans(cells)
        held = held_ancestors(cells)
        if held:
            spans.extend((a, a) for a in held)
        spans.sort()
        return bridge_single_gaps(spans)
    return ranges


def bridge_single_gaps(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted cell-id ranges merged, with the one-value gaps between neighbours closed: fewer,
    longer scans (a scan's setup costs far more than a key). Always correct: a round keeps only
    the records inside its annulus and any other record read waits, with its distance, for its
    own round (`_rounds`), so reading more never changes results. A gap between two cell ranges
    is one of the values S2 puts between sibling cells' ranges, which are not cell ids or are
    ancestors of the lower cell (scanned anyway), so in practice no extra key is read.
    """
    out: list[tuple[int, int]] = []
    if not intervals:
        return out
    cur_lo, cur_hi = intervals[0]
    for lo, hi in intervals:   # sorted by start; overlapping, adjacent and one apart merge
        if lo <= cur_hi + 2:
            if hi > cur_hi:
                cur_hi = hi
        else:
            out.append((cur_lo, cur_hi))
            cur_lo, cur_hi = lo, hi
    out.append((cur_lo, cur_hi))
    return out


# A face holds 2**61 leaf-cell id units over 4 pi / 6 steradians (S2 cells of one level have
# areas within a factor of about 2 of each other, which is plenty to size a first round).
_SR_PER_ID = (4 * math.pi / 6) / 2 ** 61
_SAMPLE_KEYS = 16


def _sampled_density(center, sample: Sample) -> float | None:
    """Keys per steradian around the center, from the spacing of the keys that follow the
    center's leaf cell in cell-id (Hilbert curve) order on its face: one short scan instead of
    mongod's neighbourhood probes, which take a scan per level. None when the face holds too
    few keys to tell."""
    leaf = s2.S2.S2CellId(center).id()
    face_end = ((leaf >> 61) + 1 << 61) - 1
    ids = sample(s2.to_signed(leaf), s2.to_signed(face_end), _SAMPLE_KEYS)
    if len(ids) < _SAMPLE_KEYS:
        return None
    spread = ids[-1] - s2.to_signed(leaf)
    if spread <= 0:
        return None
    return len(ids) / (spread * _SR_PER_ID)


def _radius_for(density: float, wanted: int) -> float:
    """The radius expected to hold `_MARGIN` times `wanted` keys at this density."""
    return math.sqrt(_MARGIN * wanted / (math.pi * density))


class DensityHints:
    """Sampled key densities by neighbourhood, kept across queries of one index.

    Only a hint: a density sizes the first annulus, and the rounds are exact annuli whatever
    their size (a stale density after writes costs an extra round or a few more keys, never a
    different answer). A neighbourhood is a cube of side 1/256 on the unit vector (about a
    quarter of a degree); each density is sampled again after `REFRESH` uses, and the table
    starts over beyond `MAX_ENTRIES`."""

    SCALE = 256.0
    REFRESH = 64
    MAX_ENTRIES = 20_000

    __slots__ = ("_by_cube",)

    def __init__(self) -> None:
        self._by_cube: dict[tuple[int, int, int], list] = {}

    @classmethod
    def cube_of(cls, vector: tuple[float, float, float]) -> tuple[int, int, int]:
        x, y, z = vector
        scale = cls.SCALE
        return (int(x * scale), int(y * scale), int(z * scale))

    def get(self, cube: tuple[int, int, int]) -> float | None:
        entry = self._by_cube.get(cube)
        if entry is None:
            return None
        entry[1] += 1
        if entry[1] > self.REFRESH:
            return None
        return entry[0]

    def put(self, cube: tuple[int, int, int], density: float) -> None:
        if len(self._by_cube) >= self.MAX_ENTRIES:
            self._by_cube.clear()
        self._by_cube[cube] = [density, 0]


def _one_by_one(distance: Distance) -> Distances:
    return lambda rids: [distance(rid) for rid in rids]


def near_2dsphere(center, scan: Scan, distance: Distance | None, params: S2IndexParams,
                  min_distance: float = 0.0, max_distance: float = math.inf, wanted: int = 0,
                  exists: Exists | None = None, sample: Sample | None = None,
                  hints: DensityHints | None = None, center_vector: tuple | None = None,
                  distances: Distances | None = None,
                  held_ancestors: HeldAncestors | None = None,
                  by_round: bool = False) -> Iterator[Any]:
    """(distance, rid) pairs in increasing distance; radii and distances in radians.
    `wanted`: how many the caller will read at most (0: unknown), which sizes the rounds;
    `exists`: a cheaper emptiness test of ranges than a scan (the density probe's);
    `sample(lo, hi, n)`: about the first n cell ids stored in [lo, hi] (sizes the first round
    when `wanted` is known; the results never depend on it); `hints`: densities sampled by
    earlier searches of the same index, by the neighbourhood of `center_vector` (the center's
    unit vector), used instead of a sample when one is known; `distances`: `distance` for a
    list of records at once (either one is given); `held_ancestors(cells)`: the ancestors
    of covering cells that some entry holds exactly, so a round scans no covering ancestor
    that nothing is stored under (then `scan` gets only present single values); `by_round`:
    the pairs come in one list per round (`_rounds`)."""
    first = None
    if wanted > 0 and sample is not None:
        density = None
        cube = None
        if hints is not None and center_vector is not None:
            cube = hints.cube_of(center_vector)
            density = hints.get(cube)
        if density is None:
            density = _sampled_density(center, sample)
            if density is not None and cube is not None:
                hints.put(cube, density)   # type: ignore[union-attr]
        if density is not None:
            first = _radius_for(density, wanted)
    if first is not None:
        step = first
        wanted_for_steps = -wanted   # already sized: no further scaling of the first step
    else:
        step = _s2_density_step(center, exists or _exists_by_scan(scan), params)
        wanted_for_steps = wanted
    if distances is None:
        assert distance is not None
        distances = _one_by_one(distance)
    # bridge_single_gaps gives sorted, disjoint ranges
    return _rounds(scan, distances, _annulus_ranges(center, params, held_ancestors), step, min_distance,
                   max_distance, math.pi, wanted_for_steps, disjoint=True, by_round=by_round)


# --- 2d -------------------------------------------------------------------------------------

def _flat_density_step(x: float, y: float, exists: Exists, params: geohash.TwoDParams) -> float:
    level = params.bits
    while level > 0:
        edge = params.cell_edge(level)
        box = (x - edge, y - edge, x + edge, y + edge)
        if exists(geohash.box_ranges(box, params)):
            break
        level -= 1
    return 3 * params.cell_edge(level)


def near_2d(x: float, y: float, scan: Scan, distance: Distance, params: geohash.TwoDParams,
            min_distance: float = 0.0, max_distance: float = math.inf, wanted: int = 0,
            exists: Exists | None = None) -> Iterator[tuple[float, Hashable]]:
    """(distance, rid) pairs in increasing flat distance (coordinate units) on a 2d index."""
    step = _flat_density_step(x, y, exists or _exists_by_scan(scan), params)

    def ranges(inner: float, outer: float) -> list:
        return geohash.box_ranges((x - outer, y - outer, x + outer, y + outer), params)
    full = math.hypot(params.max - params.min, params.max - params.min)
    return _rounds(scan, _one_by_one(distance), ranges, step, min_distance, max_distance, full, wanted)


# --- reference ------------------------------------------------------------------------------

def near_brute_force(distances: Iterable[tuple[Hashable, float | None]],
                     min_distance: float = 0.0, max_distance: float = math.inf
                     ) -> list[tuple[float, Hashable]]:
    """Every (distance, rid) within [min, max], sorted: what a collection scan would give."""
    out = [(d, rid) for rid, d in distances
           if d is not None and min_distance <= d <= max_distance]
    out.sort(key=lambda pair: pair[0])
    return out
