"""GeoJSON and legacy parsing: every shape, and mongod's messages for bad input."""
from __future__ import annotations

import math

import pytest
from bson.int64 import Int64

from ginkgodb.query.geo import CRS, GeoError, parse_geojson, parse_point, parse_stored, s2
from ginkgodb.query.geo.geojson import cpp_double, loop_error

SQUARE = [[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]]
HOLE = [[2, 2], [4, 2], [4, 4], [2, 4], [2, 2]]


def reason(fn, *args):
    with pytest.raises(GeoError) as info:
        fn(*args)
    return info.value.reason


def test_point_and_its_leaf_cell():
    g = parse_geojson({"type": "Point", "coordinates": [1.5, -2]})
    assert g.kind == "Point" and g.crs == CRS.SPHERE and g.flat_point == (1.5, -2.0)
    assert s2.S2.S2CellId(g.points[0]).id() == g.cells[0].id().id()
    assert g.cells[0].level() == 30


def test_point_accepts_altitude_and_document_coordinates():
    assert parse_geojson({"type": "Point", "coordinates": [1, 2, 300]}).flat_point == (1.0, 2.0)
    assert parse_geojson({"type": "Point", "coordinates": {"a": 1, "b": 2}}).flat_point == (1.0, 2.0)


@pytest.mark.parametrize("coords,message", [
    ([200, 0], "longitude/latitude is out of bounds, lng: 200 lat: 0"),
    ([0, -90.5], "longitude/latitude is out of bounds, lng: 0 lat: -90.5"),
    ("hello", "Point must be an array or object, instead got type string"),
    (["hello", 5], "Point must only contain numeric elements, instead got type string"),
    ([5], "Point must only contain numeric elements, instead got type missing"),
    ([math.inf, 5], "Point coordinates must be finite numbers"),
    ([True, 5], "Point must only contain numeric elements, instead got type bool"),
])
def test_point_errors(coords, message):
    assert reason(parse_geojson, {"type": "Point", "coordinates": coords}) == message


def test_boundary_longitudes_and_latitudes_are_valid():
    for lng, lat in [(180, 90), (-180, -90), (Int64(180), 0)]:
        parse_geojson({"type": "Point", "coordinates": [lng, lat]})


def test_unknown_type_prints_the_object():
    assert reason(parse_geojson, {"type": "Circle", "coordinates": [1, 2]}) == \
        'unknown GeoJSON type: { type: "Circle", coordinates: [ 1, 2 ] }'
    assert reason(parse_geojson, {}) == "unknown GeoJSON type: {}"


def test_linestring_and_its_errors():
    g = parse_geojson({"type": "LineString", "coordinates": [[0, 0], [1, 1], [1, 1], [2, 0]]})
    assert g.lines[0].num_vertices() == 3   # adjacent duplicates dropped, as mongod
    assert reason(parse_geojson, {"type": "LineString", "coordinates": [[0, 0], [0, 0]]}) == \
        "GeoJSON LineString must have at least 2 vertices, instead got 1 vertices: [ [ 0, 0 ], [ 0, 0 ] ]"
    assert reason(parse_geojson, {"type": "LineString", "coordinates": [5, 5]}) == \
        "GeoJSON coordinates must be an array, instead got type int"
    assert reason(parse_geojson, {"type": "LineString", "coordinates": 5.0}) == \
        "GeoJSON coordinates must be an array of coordinates, instead got type double"


def test_polygon_with_hole():
    g = parse_geojson({"type": "Polygon", "coordinates": [SQUARE, HOLE]})
    poly = g.polygons[0]
    assert poly.num_loops() == 2
    assert poly.Contains(s2.point(1, 1)) and not poly.Contains(s2.point(3, 3))


def test_clockwise_shell_is_normalized_to_the_small_side():
    g = parse_geojson({"type": "Polygon", "coordinates": [list(reversed(SQUARE))]})
    assert g.polygons[0].Contains(s2.point(5, 5))
    assert not g.polygons[0].Contains(s2.point(50, 50))


BOWTIE = [[0, 0], [1, 1], [1, 0], [0, 1], [0, 0]]


@pytest.mark.parametrize("coords,message", [
    ([[[0, 0], [1, 2], [2, 3]]],
     "Loop is not closed, first vertex does not equal last vertex: [ [ 0, 0 ], [ 1, 2 ], [ 2, 3 ] ]"),
    ("hi", "Polygon coordinates must be an array, instead got type string"),
    ([[[0, 0], [1, 2], [0, 0]]],
     "Loop must have at least 3 different vertices, 2 unique vertices were provided: "
     "[ [ 0, 0 ], [ 1, 2 ], [ 0, 0 ] ]"),
    ([[[0, 0], [1, 0], [1, 0], [0, 0]]],
     "Loop must have at least 3 different vertices, 2 unique vertices were provided: "
     "[ [ 0, 0 ], [ 1, 0 ], [ 1, 0 ], [ 0, 0 ] ]"),
    ([[]], "Loop has no vertices: []"),
    ([], "Polygon has no loops."),
    ([BOWTIE],
     "Loop is not valid: [ [ 0, 0 ], [ 1, 1 ], [ 1, 0 ], [ 0, 1 ], [ 0, 0 ] ] Edges 0 and 2 cross. "
     "Edge locations in degrees: [0.0000000, 0.0000000]-[1.0000000, 1.0000000] and "
     "[1.0000000, 0.0000000]-[0.0000000, 1.0000000]"),
    ([[[0, 0], [2, 0], [1, 1], [2, 2], [0, 2], [1, 1], [0, 0]]],
     "Loop is not valid: [ [ 0, 0 ], [ 2, 0 ], [ 1, 1 ], [ 2, 2 ], [ 0, 2 ], [ 1, 1 ], [ 0, 0 ] ] "
     "Duplicate vertices: 2 and 5"),
    ([SQUARE, [[20, 20], [21, 20], [21, 21], [20, 20]]],
     "Secondary loops not contained by first exterior loop - secondary loops must be holes: "
     "[ [ 20, 20 ], [ 21, 20 ], [ 21, 21 ], [ 20, 20 ] ] first loop: "
     "[ [ 0, 0 ], [ 10, 0 ], [ 10, 10 ], [ 0, 10 ], [ 0, 0 ] ]"),
])
def test_polygon_errors(coords, message):
    assert reason(parse_geojson, {"type": "Polygon", "coordinates": coords}) == message


def test_crossing_holes():
    other = [[3, 3], [5, 3], [5, 5], [3, 5], [3, 3]]
    assert reason(parse_geojson, {"type": "Polygon", "coordinates": [SQUARE, HOLE, other]}) \
        .startswith("Polygon isn't valid: Loop 1 crosses loop 2 [ [ [ 0, 0 ]")


def test_nested_holes_are_refused():
    inner = [[2.5, 2.5], [3.5, 2.5], [3.5, 3.5], [2.5, 3.5], [2.5, 2.5]]
    assert reason(parse_geojson, {"type": "Polygon", "coordinates": [SQUARE, HOLE, inner]}) \
        .startswith("Polygon interior loops cannot be nested: ")


def test_hole_sharing_an_edge_with_the_shell():
    hole = [[0, 0], [5, 5], [10, 0], [0, 0]]
    assert reason(parse_geojson, {"type": "Polygon", "coordinates": [SQUARE, hole]}).startswith(
        "Polygon isn't valid: Duplicate edge: loop 1, edge 2 and loop 0, edge 0 [ [ [ 0, 0 ]")


def test_hole_touching_the_shell_at_two_vertices():
    hole = [[0, 0], [5, 5], [0, 10], [2, 5], [0, 0]]
    assert reason(parse_geojson, {"type": "Polygon", "coordinates": [SQUARE, hole]}) == (
        "Loop 1 shares more than one vertex with its parent loop 0: [ [ [ 0, 0 ], [ 10, 0 ], "
        "[ 10, 10 ], [ 0, 10 ], [ 0, 0 ] ], [ [ 0, 0 ], [ 5, 5 ], [ 0, 10 ], [ 2, 5 ], [ 0, 0 ] ] ]")


def test_hole_touching_the_shell_at_one_vertex_is_valid():
    hole = [[0, 0], [5, 5], [5, 1], [0, 0]]
    assert parse_geojson({"type": "Polygon", "coordinates": [SQUARE, hole]}).polygons[0].num_loops() == 2


def test_big_polygon_keeps_its_winding():
    crs = {"type": "name", "properties": {"name": "urn:x-mongodb:crs:strictwinding:EPSG:4326"}}
    # Clockwise ring: the strict interior is everything but the small square.
    g = parse_geojson({"type": "Polygon", "coordinates": [list(reversed(SQUARE))], "crs": crs})
    assert g.crs == CRS.STRICT_SPHERE
    assert g.big_polygon.Contains(s2.point(50, 50)) and not g.big_polygon.Contains(s2.point(5, 5))
    assert reason(parse_geojson, {"type": "Polygon", "coordinates": [SQUARE, HOLE], "crs": crs}) \
        .startswith("Only one simple loop is allowed in a big polygon, instead provided 2 loops: ")
    assert reason(parse_geojson, {"type": "Point", "coordinates": [1, 2], "crs": crs}) == \
        "Strict winding order CRS is only supported by polygon"


@pytest.mark.parametrize("crs,message", [
    (5, "GeoJSON CRS must be an object, instead got type int"),
    ({"type": "x"}, 'GeoJSON CRS must have field "type": "name"'),
    ({"type": "name"}, 'CRS must have field "properties" which is an object, instead got type missing'),
    ({"type": "name", "properties": {"nam": "x"}},
     'In CRS, "properties.name" must be a string, instead got type missing'),
    ({"type": "name", "properties": {"name": "EPSG:3857"}}, "Unknown CRS name: EPSG:3857"),
])
def test_crs_errors(crs, message):
    assert reason(parse_geojson, {"type": "Point", "coordinates": [1, 2], "crs": crs}) == message


def test_named_crs_are_accepted():
    for name in ("EPSG:4326", "urn:ogc:def:crs:OGC:1.3:CRS84"):
        crs = {"type": "name", "properties": {"name": name}}
        assert parse_geojson({"type": "Point", "coordinates": [1, 2], "crs": crs}).crs == CRS.SPHERE


def test_multi_geometries():
    mp = parse_geojson({"type": "MultiPoint", "coordinates": [[1, 2], [3, 4]]})
    assert len(mp.points) == 2 and len(mp.cells) == 2 and not mp.is_point
    ml = parse_geojson({"type": "MultiLineString", "coordinates": [[[0, 0], [1, 1]], [[2, 2], [3, 3]]]})
    assert len(ml.lines) == 2
    mpoly = parse_geojson({"type": "MultiPolygon", "coordinates": [[SQUARE], [[[20, 20], [21, 20], [21, 21], [20, 20]]]]})
    assert len(mpoly.polygons) == 2
    assert reason(parse_geojson, {"type": "MultiPoint", "coordinates": []}) == \
        "MultiPoint coordinates must have at least 1 element"
    assert reason(parse_geojson, {"type": "MultiPolygon", "coordinates": ""}) == \
        "MultiPolygon coordinates must be an array, instead got type string"
    assert reason(parse_geojson, {"type": "MultiLineString", "coordinates": []}) == \
        "MultiLineString coordinates must have at least 1 element"


def test_geometry_collection():
    gc = parse_geojson({"type": "GeometryCollection", "geometries": [
        {"type": "Point", "coordinates": [1, 2]},
        {"type": "LineString", "coordinates": [[0, 0], [1, 1]]},
        {"type": "Polygon", "coordinates": [SQUARE]}]})
    assert (len(gc.points), len(gc.lines), len(gc.polygons)) == (1, 1, 1)
    bad = {"type": "GeometryCollection", "geometries": [
        {"type": "MultiPoint", "coordinates": [[-73.9580, 40.8003]]}, 5]}
    assert reason(parse_geojson, bad) == \
        'Element 1 of "geometries" must be an object, instead got type int: 5'
    nested = {"type": "GeometryCollection", "geometries": [{"type": "GeometryCollection", "geometries": []}]}
    assert reason(parse_geojson, nested).startswith("GeometryCollections cannot be nested: ")
    assert reason(parse_geojson, {"type": "GeometryCollection", "geometries": []}) == \
        "GeometryCollection geometries must have at least 1 element"


def test_stored_legacy_points():
    for value in ([1, 2], [1, 2, 3], {"x": 1, "y": 2}, {"lng": 1.5, "lat": 2, "note": "x"}):
        g = parse_stored("loc", value)
        assert g.crs == CRS.FLAT and g.is_point
    assert parse_stored("loc", {"x": 1, "y": 2}).flat_point == (1.0, 2.0)
    assert reason(parse_stored, "loc", 5) == "geo element must be an array or object: loc: 5"
    assert reason(parse_stored, "loc", "abc") == 'geo element must be an array or object: loc: "abc"'
    assert reason(parse_stored, "loc", [[1, 2], [3, 4]]) == \
        "Point must only contain numeric elements, instead got type array"


def test_query_points_allow_no_extra_elements():
    assert reason(parse_point, [1, 2, 3], False) == "Point must only contain two numeric elements"
    assert parse_point([1, 2, 3], True).flat_point == (1.0, 2.0)


def test_cpp_double_formatting():
    assert [cpp_double(x) for x in (200.0, -0.5, 180.0000001, 1e-7)] == ["200", "-0.5", "180", "1e-07"]


def test_loop_error_is_none_for_valid_loops():
    assert loop_error([s2.point(*c) for c in SQUARE[:-1]]) is None
