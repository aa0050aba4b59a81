"""Exact $geoWithin / $geoIntersects / distance semantics, per shape."""
from __future__ import annotations

import math

import pytest

from ginkgodb.errors import CommandError
from ginkgodb.query.geo import distance_meters, flat_distance, parse_geo_predicate, parse_stored, s2

SQUARE = [[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]]
HOLE = [[2, 2], [4, 2], [4, 4], [2, 4], [2, 2]]
POLY = {"type": "Polygon", "coordinates": [SQUARE, HOLE]}


def within(region, value):
    return parse_geo_predicate({"$geoWithin": region}).matches(parse_stored("loc", value))


def intersects(region, value):
    return parse_geo_predicate({"$geoIntersects": region}).matches(parse_stored("loc", value))


def pt(x, y):
    return {"type": "Point", "coordinates": [x, y]}


def line(*coords):
    return {"type": "LineString", "coordinates": [list(c) for c in coords]}


@pytest.mark.parametrize("value,expected", [
    (pt(1, 1), True), (pt(3, 3), False), (pt(20, 5), False),
    ([1, 1], True), ({"x": 3, "y": 3}, False),           # legacy pairs are projected
    (pt(10, 5), True), (pt(0, 0), True),                  # edges and vertices count as inside
    (line((1, 1), (1, 9)), True), (line((1, 1), (3, 3)), False), (line((1, 1), (20, 1)), False),
    ({"type": "Polygon", "coordinates": [[[5, 5], [6, 5], [6, 6], [5, 5]]]}, True),
    ({"type": "Polygon", "coordinates": [[[1, 1], [5, 1], [5, 5], [1, 5], [1, 1]]]}, False),
    ({"type": "MultiPoint", "coordinates": [[1, 1], [9, 9]]}, True),
    ({"type": "MultiPoint", "coordinates": [[1, 1], [3, 3]]}, False),
    ({"type": "GeometryCollection", "geometries": [pt(1, 1), line((5, 5), (6, 6))]}, True),
    ({"type": "GeometryCollection", "geometries": [pt(1, 1), pt(30, 30)]}, False),
])
def test_within_polygon_with_hole(value, expected):
    assert within({"$geometry": POLY}, value) is expected


def test_within_multipolygon_any_member():
    mp = {"type": "MultiPolygon", "coordinates": [[SQUARE], [[[20, 20], [30, 20], [30, 30], [20, 30], [20, 20]]]]}
    assert within({"$geometry": mp}, pt(25, 25)) and within({"$geometry": mp}, pt(5, 5))
    assert not within({"$geometry": mp}, {"type": "MultiPoint", "coordinates": [[5, 5], [15, 15]]})


def test_geodesic_edges():
    # The edge from (-60, 40) to (60, 40) is a great circle arc bulging north to ~59.3 degrees.
    ring = [[-60, 40], [60, 40], [60, 80], [-60, 80], [-60, 40]]
    region = {"$geometry": {"type": "Polygon", "coordinates": [ring]}}
    assert not within(region, pt(0, 58)) and within(region, pt(0, 62))


def test_center_sphere():
    region = {"$centerSphere": [[0, 0], 10 / 6378.1]}       # 10 km
    assert within(region, pt(0.08, 0)) and not within(region, pt(0.1, 0))
    assert within(region, [0.08, 0])                        # legacy pair
    assert within(region, line((0.01, 0), (0.05, 0.01)))
    assert not within(region, line((0.01, 0), (0.2, 0)))
    tri = {"type": "Polygon", "coordinates": [[[0, 0], [0.05, 0], [0, 0.05], [0, 0]]]}
    assert within(region, tri)
    assert not within(region, {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [0, 1], [0, 0]]]})


def test_flat_regions():
    assert within({"$box": [[0, 0], [10, 10]]}, [10, 10]) and not within({"$box": [[0, 0], [10, 10]]}, [10.1, 5])
    assert within({"$box": [[10, 10], [0, 0]]}, [5, 5])     # corners in either order
    assert within({"$box": [[0, 0], [10, 10]]}, pt(5, 5))   # GeoJSON points project to flat
    assert not within({"$box": [[0, 0], [10, 10]]}, line((1, 1), (2, 2)))
    assert within({"$center": [[0, 0], 5]}, [3, 4]) and not within({"$center": [[0, 0], 5]}, [3, 4.1])
    tri = {"$polygon": [[0, 0], [10, 0], [0, 10]]}
    assert within(tri, [1, 1]) and not within(tri, [6, 6])
    assert within(tri, [0, 0]) and within(tri, [5, 0]) and within(tri, [0, 5])   # vertex, edges
    # mongod's ray test: on the slanted edge (5, 5) the rightward ray meets no other edge.
    assert within(tri, [5, 5])
    # A flat box matches legacy points out of lng/lat range too.
    assert within({"$box": [[0, 0], [500, 500]]}, [400, 400])


def test_intersects():
    region = {"$geometry": POLY}
    assert intersects(region, pt(1, 1)) and not intersects(region, pt(3, 3))
    assert intersects(region, line((-5, 5), (5, 5)))
    assert not intersects(region, line((-5, -5), (-5, 5)))
    assert intersects(region, {"type": "Polygon", "coordinates": [[[9, 9], [20, 9], [20, 20], [9, 20], [9, 9]]]})
    assert intersects({"$geometry": line((0, -5), (0, 5))}, line((-5, 0), (5, 0)))
    assert intersects({"$geometry": line((0, -5), (0, 5))}, pt(0, 1))
    assert intersects({"$geometry": pt(0, 1)}, pt(0, 1)) and not intersects({"$geometry": pt(0, 1)}, pt(0, 1.0001))
    assert intersects({"$geometry": [1, 1]}, pt(1, 1))      # legacy point projected to the sphere
    assert intersects({"$geometry": {"type": "MultiPoint", "coordinates": [[50, 50], [1, 1]]}}, POLY)


def test_big_polygon_query():
    crs = {"type": "name", "properties": {"name": "urn:x-mongodb:crs:strictwinding:EPSG:4326"}}
    # Counter-clockwise ring around most of the earth except a small square.
    big = {"type": "Polygon", "coordinates": [list(reversed(SQUARE))], "crs": crs}
    assert within({"$geometry": big}, pt(50, 50)) and not within({"$geometry": big}, pt(5, 5))
    assert intersects({"$geometry": big}, line((5, 5), (50, 50)))
    # Stored big polygons never match.
    assert not within({"$geometry": POLY}, big)


def test_query_errors():
    def err(operand):
        with pytest.raises(CommandError) as info:
            parse_geo_predicate(operand)
        return info.value.code, info.value.errmsg
    assert err({"$geoWithin": {"$geometry": pt(1, 2)}}) == (
        2, '$within not supported with provided geometry: { $geoWithin: { $geometry: '
           '{ type: "Point", coordinates: [ 1, 2 ] } } }')
    assert err({"$geoIntersects": {"$box": [[0, 0], [1, 1]]}}) == (
        2, "$geoIntersect not supported with provided geometry: { $geoIntersects: "
           "{ $box: [ [ 0, 0 ], [ 1, 1 ] ] } }")
    assert err({"$geoWithin": 5}) == (2, "geometry must be an object")
    assert err({"$geoWithin": {}}) == (2, "geo query doesn't have any geometry")
    assert err({"$geoWithin": {"$circle": [[0, 0], 1]}}) == (
        2, "unknown geo specifier: $circle: [ [ 0, 0 ], 1 ]")
    assert err({"$geoWithin": {"$box": [[0, 0], [1, 1]], "$center": [[0, 0], 1]}}) == (
        2, "$geoWithin doesn't accept multiple shapes $geoWithin: { $box: [ [ 0, 0 ], [ 1, 1 ] ], "
           "$center: [ [ 0, 0 ], 1 ] }")
    assert err({"$geoWithin": {"$center": [[0, 0], -1]}}) == (2, "Radius must be a non-negative number: -1")
    assert err({"$geoWithin": {"$center": [[0, 0], 1, 2]}}) == (
        2, "Only 2 fields allowed for circular region, but more were provided")
    assert err({"$geoWithin": {"$centerSphere": [[200, 0], 1]}}) == (
        2, "longitude/latitude is out of bounds, lng: 200 lat: 0")
    assert err({"$geoWithin": {"$polygon": [[0, 0], [1, 1]]}}) == (
        2, "Polygon must have at least 3 points, instead got 2 vertices")
    assert err({"$geoWithin": {"$box": [[0, 0]]}}) == (
        2, "Point must be an array or object, instead got type missing")
    assert err({"$geoWithin": {"$geometry": {"type": "Polygon", "coordinates": [[[0, 0], [1, 1], [1, 0]]]}}}) == (
        2, "Loop is not closed, first vertex does not equal last vertex: [ [ 0, 0 ], [ 1, 1 ], [ 1, 0 ] ]")
    assert err({"$geoWithin": {"$geometry": {}}}) == (2, "unknown GeoJSON type: {}")
    assert err({"$near": [0, 0]}) == (2, "invalid geo query predicate: { $near: [ 0, 0 ] }")


def test_within_accepts_deprecated_unique_docs_before_the_shape():
    assert within({"$uniqueDocs": True, "$box": [[0, 0], [1, 1]]}, [0.5, 0.5])
    # mongod checks for a second shape before it looks at the name, so after a shape it fails.
    with pytest.raises(CommandError, match="doesn't accept multiple shapes"):
        within({"$box": [[0, 0], [1, 1]], "$uniqueDocs": True}, [0.5, 0.5])
    assert intersects({"$geometry": pt(1, 1), "$uniqueDocs": True}, pt(1, 1))


def test_distances():
    assert distance_meters(s2.point(0, 0), parse_stored("loc", pt(1, 0))) == pytest.approx(
        math.radians(1) * 6378100)
    # The closest point of a line or polygon, not a vertex; 0 inside a polygon.
    d = distance_meters(s2.point(5, 1), parse_stored("loc", line((0, 0), (10, 0))))
    assert d == pytest.approx(math.radians(1) * 6378100, rel=1e-3)
    assert distance_meters(s2.point(1, 1), parse_stored("loc", POLY)) == 0
    assert distance_meters(s2.point(3, 3), parse_stored("loc", POLY)) == pytest.approx(
        math.radians(1) * 6378100, rel=1e-2)
    assert flat_distance(0, 0, parse_stored("loc", [3, 4])) == 5
    assert flat_distance(0, 0, parse_stored("loc", line((0, 0), (1, 1)))) is None


def test_matches_value_treats_invalid_geometry_as_no_match():
    pred = parse_geo_predicate({"$geoWithin": {"$geometry": POLY}})
    assert pred.matches_value("loc", [1, 1])
    assert not pred.matches_value("loc", "here") and not pred.matches_value("loc", None)
    assert not pred.matches_value("loc", {"type": "Point", "coordinates": [500, 1]})
