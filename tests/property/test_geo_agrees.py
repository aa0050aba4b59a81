"""Every geo query answers what a brute-force check over all documents answers.

Documents are GeoJSON points (and some lines and polygons) scattered around a random center;
queries are $geoWithin ($geometry polygon, $centerSphere), $geoIntersects and $near with
$maxDistance. The brute force is independent of the code under test: great-circle distances
by the haversine formula, and polygon containment by S2's own loop (edges are geodesics).
Points within a hair of a boundary may go either way (floating point): they are tolerated.
Indexed answers (2dsphere, and 2d for legacy pairs) must also equal the collection scan's.
"""
from __future__ import annotations

import math

import bson
import pytest
import s2geometry
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.engines import ENGINES, fresh_engine

from ginkgodb.commands import CommandContext, dispatch

R = 6378100.0
EPS = 1e-6   # meters of tolerance around a boundary
#: a spherical cap's boundary is decided on S1ChordAngle (squared chord lengths in doubles), which
#: cannot tell distances near zero apart below about 2e-8 radians (0.13 m): the same in mongod
CAP_EPS = 0.2

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def haversine(a, b):
    (lng1, lat1), (lng2, lat2) = [(math.radians(x), math.radians(y)) for x, y in (a, b)]
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lng2 - lng1) / 2) ** 2
    return 2 * R * math.asin(min(1.0, math.sqrt(h)))


def s2_point(lng, lat):
    return s2geometry.S2LatLng.FromDegrees(lat, lng).Normalized().ToPoint()


@st.composite
def scene(draw):
    cx, cy = draw(st.floats(-170, 170)), draw(st.floats(-70, 70))
    spread = draw(st.floats(0.01, 5.0))
    offsets = st.tuples(st.floats(-1, 1), st.floats(-1, 1))
    pts = draw(st.lists(offsets, min_size=1, max_size=40))
    points = [[cx + dx * spread, cy + dy * spread] for dx, dy in pts]
    shapes = []
    for (dx, dy), kind, size in draw(st.lists(st.tuples(offsets, st.sampled_from(["line", "square"]),
                                                        st.floats(0.001, 0.3)), max_size=8)):
        x, y, d = cx + dx * spread, cy + dy * spread, size * spread
        if kind == "line":
            shapes.append([[x, y], [x + d, y + d / 2]])
        else:
            shapes.append([[x, y], [x + d, y], [x + d, y + d], [x, y + d], [x, y]])
    return (cx, cy, spread), points, shapes


def shape_doc(coords):
    if coords[0] == coords[-1]:
        return {"type": "Polygon", "coordinates": [coords]}
    return {"type": "LineString", "coordinates": coords}


def shape_distance(center, coords):
    """Meters from a point to a line or a polygon (0 inside), by S2's own primitives."""
    q = s2_point(*center)
    line = s2geometry.S2Polyline()
    line.InitFromS2Points([s2_point(*v) for v in coords])
    if coords[0] == coords[-1]:
        loop = s2geometry.S2Loop([s2_point(*v) for v in coords[:-1]])
        loop.Normalize()
        if loop.Contains(q):
            return 0.0
    return s2geometry.S1Angle(q, line.Project(q)[0]).radians() * R


@st.composite
def query_polygon(draw, center):
    """A convex polygon (counter-clockwise) around a point near the scene's center."""
    cx, cy, spread = center
    qx = cx + draw(st.floats(-0.5, 0.5)) * spread
    qy = cy + draw(st.floats(-0.5, 0.5)) * spread
    radius = spread * draw(st.floats(0.05, 1.5))
    n = draw(st.integers(3, 8))
    start = draw(st.floats(0, 2 * math.pi))
    ring = [[qx + radius * math.cos(start + 2 * math.pi * k / n),
             qy + radius * math.sin(start + 2 * math.pi * k / n)] for k in range(n)]
    return ring + [ring[0]]


def run(ctx, cmd):
    reply = dispatch(ctx, {**cmd, "$db": "t"})
    assert reply["ok"] == 1.0, reply
    return reply


def found(ctx, filt, **extra):
    reply = run(ctx, {"find": "c", "filter": filt, "batchSize": 100_000, **extra})
    return [bson.decode(d.raw) for d in reply["cursor"]["firstBatch"]]


def ids(docs):
    return sorted(d["_id"] for d in docs)


def check_between(got, sure, maybe):
    """`got` holds every sure match and nothing beyond the possible ones."""
    assert sure <= set(got) <= maybe, (sorted(sure - set(got)), sorted(set(got) - maybe))


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("geo")


@pytest.mark.parametrize("kind", ENGINES)
@SETTINGS
@given(data=st.data())
def test_spherical_queries_agree_with_brute_force(kind, scratch, data):
    center, points, shapes = data.draw(scene())
    cx, cy, spread = center
    ring = data.draw(query_polygon(center))
    with fresh_engine(kind, scratch) as engine:
        ctx = CommandContext(engine=engine)
        docs = [{"_id": i, "loc": {"type": "Point", "coordinates": p}} for i, p in enumerate(points)]
        docs += [{"_id": 1000 + i, "loc": shape_doc(c)} for i, c in enumerate(shapes)]
        run(ctx, {"insert": "c", "documents": docs})
        # the scan's answers first, then the index's
        polygon = {"type": "Polygon", "coordinates": [ring]}
        radius = spread * data.draw(st.floats(0.0, 1.0)) * math.pi / 180
        queries = [{"loc": {"$geoWithin": {"$geometry": polygon}}},
                   {"loc": {"$geoIntersects": {"$geometry": polygon}}},
                   {"loc": {"$geoWithin": {"$centerSphere": [[cx, cy], radius]}}}]
        scans = [ids(found(ctx, q)) for q in queries]
        run(ctx, {"createIndexes": "c", "indexes": [{"key": {"loc": "2dsphere"}, "name": "g"}]})
        for q, scan in zip(queries, scans):
            assert ids(found(ctx, q)) == scan, q

        loop = s2geometry.S2Loop([s2_point(*v) for v in ring[:-1]])
        loop.Normalize()
        inside = {i for i, p in enumerate(points) if loop.Contains(s2_point(*p))}
        # the polygon's boundary: points whose distance to it is tiny may go either way
        boundary = s2geometry.S2Polyline()
        boundary.InitFromS2Points([s2_point(*v) for v in ring])

        def to_boundary(p):
            q = s2_point(*p)
            return s2geometry.S1Angle(q, boundary.Project(q)[0]).radians() * R
        near_edge = {i for i, p in enumerate(points) if to_boundary(p) < EPS}
        only_points = [[i for i in scan if i < 1000] for scan in scans]
        check_between(only_points[0], inside - near_edge, inside | near_edge)
        check_between(only_points[1], inside - near_edge, inside | near_edge)
        dist = [haversine((cx, cy), p) for p in points]
        check_between(only_points[2], {i for i, d in enumerate(dist) if d < radius * R - CAP_EPS},
                      {i for i, d in enumerate(dist) if d <= radius * R + CAP_EPS})

        # $near: every point within the radius, nearest first
        qx, qy = ring[0]
        max_meters = data.draw(st.floats(0, 3 * spread * 111_000))
        got = found(ctx, {"loc": {"$near": {"$geometry": {"type": "Point", "coordinates": [qx, qy]},
                                            "$maxDistance": max_meters}}})
        dist = {i: haversine((qx, qy), p) for i, p in enumerate(points)}
        dist.update({1000 + i: shape_distance((qx, qy), c) for i, c in enumerate(shapes)})
        check_between(ids(got), {i for i, d in dist.items() if d < max_meters - CAP_EPS},
                      {i for i, d in dist.items() if d <= max_meters + CAP_EPS})
        ordered = [dist[d["_id"]] for d in got]
        assert all(a <= b + EPS for a, b in zip(ordered, ordered[1:]))
        limit = data.draw(st.integers(1, 5))
        first = found(ctx, {"loc": {"$near": {"$geometry": {"type": "Point", "coordinates": [qx, qy]}}}},
                      limit=limit)
        nearest = sorted(dist.values())[:limit]
        assert [dist[d["_id"]] for d in first] == pytest.approx(nearest, abs=EPS)


@pytest.mark.parametrize("kind", ENGINES)
@SETTINGS
@given(data=st.data())
def test_flat_queries_agree_with_brute_force(kind, scratch, data):
    coords = st.floats(-50, 50, allow_nan=False).map(lambda v: round(v, 3))
    points = data.draw(st.lists(st.tuples(coords, coords), min_size=1, max_size=40))
    x0, y0 = data.draw(coords), data.draw(coords)
    x1, y1 = x0 + data.draw(st.floats(0, 40)), y0 + data.draw(st.floats(0, 40))
    r = data.draw(st.floats(0, 40))
    with fresh_engine(kind, scratch) as engine:
        ctx = CommandContext(engine=engine)
        run(ctx, {"insert": "c", "documents": [{"_id": i, "p": list(p)} for i, p in enumerate(points)]})
        queries = [{"p": {"$geoWithin": {"$box": [[x0, y0], [x1, y1]]}}},
                   {"p": {"$geoWithin": {"$center": [[x0, y0], r]}}}]
        scans = [ids(found(ctx, q)) for q in queries]
        assert scans[0] == sorted(i for i, (x, y) in enumerate(points) if x0 <= x <= x1 and y0 <= y <= y1)
        assert scans[1] == sorted(i for i, (x, y) in enumerate(points) if (x - x0) ** 2 + (y - y0) ** 2 <= r * r)
        run(ctx, {"createIndexes": "c", "indexes": [{"key": {"p": "2d"}, "name": "g"}]})
        for q, scan in zip(queries, scans):
            assert ids(found(ctx, q)) == scan, q
        got = found(ctx, {"p": {"$near": [x0, y0], "$maxDistance": r}})
        dist = [math.hypot(x - x0, y - y0) for x, y in points]
        check_between(ids(got), {i for i, d in enumerate(dist) if d < r - 1e-9},
                      {i for i, d in enumerate(dist) if d <= r + 1e-9})
        ordered = [dist[d["_id"]] for d in got]
        assert ordered == sorted(ordered)
