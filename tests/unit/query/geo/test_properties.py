"""Properties: the index path never misses a match, and the predicates agree with brute force.

Brute force here means S2's own primitives used directly (a loop's point containment, the angle
between two points, points interpolated along a geodesic), not the code under test.
"""
from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ginkgodb.query.geo import (
    CRS,
    GeoError,
    S2IndexParams,
    near_2dsphere,
    near_brute_force,
    parse_geo_predicate,
    parse_stored,
    s2,
    sphere_distance,
)
from ginkgodb.query.geo.s2keys import index_cells, interval_contains, merge_intervals, region_intervals

P = S2IndexParams()
SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])

lngs = st.floats(-179.0, 179.0)
lats = st.floats(-85.0, 85.0)


@st.composite
def convex_ring(draw):
    """A convex ring: n vertices at jittered, evenly spread angles around a random center."""
    cx, cy = draw(st.floats(-170.0, 170.0)), draw(st.floats(-80.0, 80.0))
    radius = draw(st.floats(0.01, 5.0))
    n = draw(st.integers(3, 9))
    jitter = draw(st.lists(st.floats(0.0, 0.8), min_size=n, max_size=n))
    angles = [2 * math.pi * k / n + jitter[k] * math.pi / n for k in range(n)]
    ring = [[cx + radius * math.cos(a), cy + radius * math.sin(a)] for a in angles]
    return ring + [ring[0]], (cx, cy, radius)


def near_point(center, spread):
    cx, cy, _ = center
    return st.tuples(st.floats(-spread, spread), st.floats(-spread, spread)).map(
        lambda d: [max(-180.0, min(180.0, cx + d[0])), max(-90.0, min(90.0, cy + d[1]))])


@st.composite
def region_and_docs(draw):
    ring, center = draw(convex_ring())
    spread = center[2] * 2
    points = draw(st.lists(near_point(center, spread), min_size=1, max_size=8))
    a, b = draw(near_point(center, spread)), draw(near_point(center, spread))
    docs = [{"type": "Point", "coordinates": p} for p in points]
    if a != b:
        docs.append({"type": "LineString", "coordinates": [a, b]})
    return ring, docs


def _loop(ring):
    loop = s2.S2.S2Loop([s2.point(*c) for c in ring[:-1]])
    loop.Normalize()
    return loop


@SETTINGS
@given(region_and_docs(), st.sampled_from(["$geoWithin", "$geoIntersects"]))
def test_index_path_never_misses_a_match(case, operator):
    ring, docs = case
    pred = parse_geo_predicate({operator: {"$geometry": {"type": "Polygon", "coordinates": [ring]}}})
    intervals = merge_intervals(region_intervals(pred.region, P))
    for doc in docs:
        try:
            geometry = parse_stored("loc", doc)
        except GeoError:
            continue  # not a valid geometry (e.g. a line whose vertices coincide): never indexed
        if pred.matches(geometry):
            cells = index_cells("loc", doc, {}, P)
            assert any(interval_contains(intervals, c) for c in cells), doc


@SETTINGS
@given(st.tuples(lngs, lats), st.floats(1e-5, 0.5), st.lists(st.tuples(lngs, lats), min_size=1, max_size=10))
def test_center_sphere_agrees_with_angles_and_never_misses(center, radius, points):
    pred = parse_geo_predicate({"$geoWithin": {"$centerSphere": [list(center), radius]}})
    intervals = merge_intervals(region_intervals(pred.region, P))
    c = s2.point(*center)
    for x, y in points:
        inside = pred.matches(parse_stored("loc", [x, y]))
        angle = s2.angle_between(c, s2.point(x, y))
        if abs(angle - radius) > 1e-9:
            assert inside == (angle <= radius)
        if inside:
            assert interval_contains(intervals, index_cells("loc", [x, y], {}, P)[0])


@SETTINGS
@given(region_and_docs())
def test_point_within_agrees_with_loop_containment(case):
    ring, docs = case
    loop = _loop(ring)
    pred = parse_geo_predicate({"$geoWithin": {"$geometry": {"type": "Polygon", "coordinates": [ring]}}})
    for doc in docs:
        if doc["type"] != "Point":
            continue
        p = s2.point(*doc["coordinates"])
        if loop.Contains(p):
            assert pred.matches(parse_stored("loc", doc))
        elif loop.GetDistance(p).radians() > 1e-9:
            assert not pred.matches(parse_stored("loc", doc))


@SETTINGS
@given(region_and_docs())
def test_line_predicates_agree_with_sampled_geodesics(case):
    ring, docs = case
    loop = _loop(ring)
    region = {"$geometry": {"type": "Polygon", "coordinates": [ring]}}
    within = parse_geo_predicate({"$geoWithin": region})
    meets = parse_geo_predicate({"$geoIntersects": region})
    for doc in docs:
        if doc["type"] != "LineString":
            continue
        try:
            geom = parse_stored("loc", doc)
        except GeoError:
            continue
        line = geom.lines[0]
        if line.GetLength().radians() < 1e-12:
            continue  # a line of (nearly) coincident vertices: S2 cannot interpolate along it
        samples = [line.Interpolate(k / 64) for k in range(65)]
        inside = [loop.Contains(p) for p in samples]
        if within.matches(geom):
            assert all(inside or loop.GetDistance(p).radians() < 1e-9 for p, inside in zip(samples, inside))
        if any(inside):
            assert meets.matches(geom)
        if not meets.matches(geom):
            assert not any(inside)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(-2, 2), st.floats(-2, 2)), min_size=0, max_size=60, unique=True),
       st.tuples(st.floats(-2, 2), st.floats(-2, 2)))
def test_near_order_equals_brute_force(points, center):
    import bisect
    geoms = {rid: parse_stored("loc", list(p)).projected(CRS.SPHERE) for rid, p in enumerate(points)}
    keys = sorted((index_cells("loc", list(p), {}, P)[0], rid) for rid, p in enumerate(points))

    def scan(ranges):
        for lo, hi in ranges:
            i = bisect.bisect_left(keys, (lo, -1))
            while i < len(keys) and keys[i][0] <= hi:
                yield keys[i][1]
                i += 1
    c = s2.point(*center)

    def dist(rid):
        return sphere_distance(c, geoms[rid])
    got = list(near_2dsphere(c, scan, dist, P))
    want = near_brute_force((rid, dist(rid)) for rid in geoms)
    assert [d for d, _ in got] == [d for d, _ in want]
    assert sorted(r for _, r in got) == list(range(len(points)))
