"""GeoJSON and legacy coordinate parsing with mongod's validation and messages (geoparser.cpp).

Parsing fails with `GeoError(reason)`: the reason is the text of mongod's Status. The caller
decides the code: a query answers 2 BadValue with the reason, a 2dsphere insert answers 16755
"Can't extract geo keys: <document>  <reason>" (see `s2keys`).

Loops are built and checked with S2: the validity test itself is S2's; only the words of the
failure (which vertices repeat, which edges cross) are found here, with S2's own predicates, so
that the message names the same vertices and edges as mongod's.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from bson.decimal128 import Decimal128

from ...bsonutil.shell_format import Style, double_nice, format_document, format_element, format_value, quoted
from ...bsonutil.types import is_number, type_name
from . import s2
from .shapes import CRS, Geometry, is_valid_lng_lat

MISSING: Any = object()   # an absent element (mongod's EOO, whose type name is "missing")

CRS_CRS84 = "urn:ogc:def:crs:OGC:1.3:CRS84"
CRS_EPSG_4326 = "EPSG:4326"
CRS_STRICT_WINDING = "urn:x-mongodb:crs:strictwinding:EPSG:4326"

GEOJSON_TYPES = ("Point", "LineString", "Polygon", "MultiPoint", "MultiLineString",
                 "MultiPolygon", "GeometryCollection")

# BSONObj::toString / BSONElement::toString as mongod writes them into messages.
TO_STRING = Style(double_nice, quoted)


class GeoError(Exception):
    """A geometry that mongod refuses; `reason` is mongod's Status reason, word for word."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def show(value: Any) -> str:
    """A value as BSONElement::toString(false) prints it."""
    return format_value(value, TO_STRING)


def show_element(name: str, value: Any) -> str:
    return format_element(name, value, TO_STRING)


def show_document(doc: Mapping) -> str:
    return format_document(doc, TO_STRING)


def cpp_double(x: float) -> str:
    """A double as C++ `ostream << double` prints it (%g, six significant digits)."""
    return f"{x:g}"


def type_of(value: Any) -> str:
    return "missing" if value is MISSING else type_name(value)


def is_object(value: Any) -> bool:
    """BSONElement::isABSONObj: an embedded document or an array."""
    return isinstance(value, (Mapping, list, tuple))


def is_geo_number(value: Any) -> bool:
    return value is not MISSING and not isinstance(value, bool) and is_number(value)


def to_float(value: Any) -> float:
    if isinstance(value, Decimal128):
        return float(value.to_decimal())
    return float(value)


def elements(value: Any) -> list:
    """The values of an embedded document or array, in order."""
    if isinstance(value, Mapping):
        return list(value.values())
    return list(value)


def first_element(value: Any) -> Any:
    items = elements(value)
    return items[0] if items else MISSING


def _field(obj: Mapping, name: str) -> Any:
    return obj[name] if name in obj else MISSING


# --- points ---------------------------------------------------------------------------------

def parse_flat_point(value: Any, allow_extra: bool = False) -> tuple[float, float]:
    """Two numbers from an array or a document (x first), as parseFlatPoint."""
    if not is_object(value):
        raise GeoError(f"Point must be an array or object, instead got type {type_of(value)}")
    items = elements(value)
    x = items[0] if items else MISSING
    if not is_geo_number(x):
        raise GeoError(f"Point must only contain numeric elements, instead got type {type_of(x)}")
    y = items[1] if len(items) > 1 else MISSING
    if not is_geo_number(y):
        raise GeoError(f"Point must only contain numeric elements, instead got type {type_of(y)}")
    if not allow_extra and len(items) > 2:
        raise GeoError("Point must only contain two numeric elements")
    fx, fy = to_float(x), to_float(y)
    if not (math.isfinite(fx) and math.isfinite(fy)):
        raise GeoError("Point coordinates must be finite numbers")
    return fx, fy


def lng_lat_point(lng: float, lat: float):
    """The S2 point of a longitude/latitude pair, refusing pairs out of range."""
    if not is_valid_lng_lat(lng, lat):
        raise GeoError(f"longitude/latitude is out of bounds, lng: {cpp_double(lng)} "
                       f"lat: {cpp_double(lat)}")
    return s2.point(lng, lat)


def _coordinate(value: Any):
    if not isinstance(value, (list, tuple)):
        raise GeoError(f"GeoJSON coordinates must be an array, instead got type {type_of(value)}")
    return lng_lat_point(*parse_flat_point(value, allow_extra=True))


def _coordinates(value: Any) -> list:
    if not isinstance(value, (list, tuple)):
        raise GeoError("GeoJSON coordinates must be an array of coordinates, instead got type "
                       f"{type_of(value)}")
    return [_coordinate(v) for v in value]


def _dedupe_adjacent(points: list) -> list:
    """Consecutive repeats dropped: exact repeats, and points no angle separates (coordinates that
    differ only below double precision on the sphere), which would make a degenerate edge."""
    out: list = []
    for p in points:
        if not out or not (s2.same_point(out[-1], p) or s2.S2.S1Angle(out[-1], p).radians() == 0.0):
            out.append(p)
    return out


def legacy_point(value: Any, allow_extra: bool) -> Geometry:
    return Geometry("Point", CRS.FLAT, flat_point=parse_flat_point(value, allow_extra))


def geojson_point(obj: Mapping, with_cell: bool = True) -> Geometry:
    coords = obj.get("coordinates") if type(obj) is dict and "crs" not in obj else None
    if type(coords) is list and len(coords) == 2:
        # the common {type, coordinates: [lng, lat]} of plain numbers in range: what the checks
        # below conclude, without them (a near center is parsed on every query)
        x, y = coords
        if ((type(x) is float or type(x) is int) and (type(y) is float or type(y) is int)
                and -180.0 <= x <= 180.0 and -90.0 <= y <= 90.0):
            x, y = float(x), float(y)
            p = s2.point(x, y)
            return Geometry("Point", CRS.SPHERE, points=[p], cells=[s2.leaf_cell(p)] if with_cell else [],
                            flat_point=(x, y))
    _crs(obj)
    x, y = parse_flat_point(_field(obj, "coordinates"), allow_extra=True)
    p = lng_lat_point(x, y)
    return Geometry("Point", CRS.SPHERE, points=[p], cells=[s2.leaf_cell(p)] if with_cell else [],
                    flat_point=(x, y))


def parse_point(value: Any, allow_extra: bool, with_cell: bool = True) -> Geometry:
    """A legacy pair or a GeoJSON point (mongod's parsePoint, used by near and $geometry).
    `with_cell=False`: a GeoJSON point without its leaf cell (a near center is only measured
    from, never intersected: the cell costs two bindings calls)."""
    if not is_object(value):
        raise GeoError(f"Point must be an array or object, instead got type {type_of(value)}")
    if isinstance(value, (list, tuple)) or is_geo_number(first_element(value)):
        return legacy_point(value, allow_extra)
    return geojson_point(value, with_cell)


# --- crs ------------------------------------------------------------------------------------

def _crs(obj: Mapping, allow_strict: bool = False) -> CRS:
    crs = _field(obj, "crs")
    if crs is MISSING:
        return CRS.SPHERE
    if not is_object(crs):
        raise GeoError(f"GeoJSON CRS must be an object, instead got type {type_of(crs)}")
    crs_obj = crs if isinstance(crs, Mapping) else {}
    if crs_obj.get("type") != "name" or not isinstance(crs_obj.get("type"), str):
        raise GeoError('GeoJSON CRS must have field "type": "name"')
    props = _field(crs_obj, "properties")
    if not is_object(props):
        raise GeoError('CRS must have field "properties" which is an object, instead got type '
                       f"{type_of(props)}")
    name = _field(props, "name") if isinstance(props, Mapping) else MISSING
    if not isinstance(name, str):
        raise GeoError('In CRS, "properties.name" must be a string, instead got type '
                       f"{type_of(name)}")
    if name in (CRS_CRS84, CRS_EPSG_4326):
        return CRS.SPHERE
    if name == CRS_STRICT_WINDING:
        if not allow_strict:
            raise GeoError("Strict winding order CRS is only supported by polygon")
        return CRS.STRICT_SPHERE
    raise GeoError(f"Unknown CRS name: {name}")


# --- lines ----------------------------------------------------------------------------------

def _line(value: Any, skip_validation: bool):
    vertices = _dedupe_adjacent(_coordinates(value))
    if not skip_validation:
        if len(vertices) < 2:
            raise GeoError("GeoJSON LineString must have at least 2 vertices, instead got "
                           f"{len(vertices)} vertices: {show(value)}")
        for i in range(1, len(vertices)):
            a, b = vertices[i - 1], vertices[i]
            if a.x() == -b.x() and a.y() == -b.y() and a.z() == -b.z():
                raise GeoError(f"GeoJSON LineString is not valid: Vertices {i - 1} and {i} are "
                               f"identical or antipodal {show(value)}")
    return s2.polyline(vertices)


# --- loops and polygons ---------------------------------------------------------------------

def _degrees(p) -> str:
    lng, lat = s2.lng_lat(p)
    return f"[{lng:.7f}, {lat:.7f}]"


def _edge_caps(vertices: list) -> list:
    """A bounding cap (center, angle) per edge: only a cheap filter before S2's crossing test."""
    caps = []
    n = len(vertices)
    for i in range(n):
        bound = s2.polyline([vertices[i], vertices[(i + 1) % n]]).GetCapBound()
        c = bound.center()
        caps.append(((c.x(), c.y(), c.z()), _cap_angle(bound.height())))
    return caps


def _cap_angle(height: float) -> float:
    # S2Cap height h = 1 - cos(angle).
    return math.acos(max(-1.0, min(1.0, 1.0 - height)))


def _caps_may_meet(a, b) -> bool:
    (ca, ra), (cb, rb) = a, b
    dot = ca[0] * cb[0] + ca[1] * cb[1] + ca[2] * cb[2]
    return math.acos(max(-1.0, min(1.0, dot))) <= ra + rb + 1e-12


def loop_error(vertices: list) -> str | None:
    """Why S2 refuses this loop, in the words mongod's S2Loop::IsValid uses; None if valid."""
    loop = s2.S2.S2Loop(vertices)
    if loop.IsValid():
        return None
    n = len(vertices)
    if n < 3:
        return "Degenerate loop"
    seen: dict = {}
    for i, p in enumerate(vertices):
        key = s2.point_key(p)
        if key in seen:
            return f"Duplicate vertices: {seen[key]} and {i}"
        seen[key] = i
    caps = _edge_caps(vertices)
    for i in range(n):
        edge_i = None
        for j in range(i + 2, n):
            if i == 0 and j == n - 1:
                continue   # they share vertex 0
            if not _caps_may_meet(caps[i], caps[j]):
                continue
            if edge_i is None:
                edge_i = s2.polyline([vertices[i], vertices[(i + 1) % n]])
            if edge_i.Intersects(s2.polyline([vertices[j], vertices[(j + 1) % n]])):
                return (f"Edges {i} and {j} cross. Edge locations in degrees: "
                        f"{_degrees(vertices[i])}-{_degrees(vertices[(i + 1) % n])} and "
                        f"{_degrees(vertices[j])}-{_degrees(vertices[(j + 1) % n])}")
    # S2 refuses it for a reason mongod's older S2 did not check (e.g. a vertex on an edge).
    return "Loop is not valid"


def _ring_points(ring: Any, shown: str) -> list:
    points = _coordinates(ring)
    if not points:
        raise GeoError(f"Loop has no vertices: {shown}")
    if not s2.same_point(points[0], points[-1]):
        raise GeoError(f"Loop is not closed, first vertex does not equal last vertex: {shown}")
    points = _dedupe_adjacent(points)[:-1]
    if len(points) < 3:
        raise GeoError(f"Loop must have at least 3 different vertices, {len(points)} unique "
                       f"vertices were provided: {shown}")
    return points


def _polygon(value: Any, skip_validation: bool):
    if not isinstance(value, (list, tuple)):
        raise GeoError(f"Polygon coordinates must be an array, instead got type {type_of(value)}")
    loops: list = []
    rings: list = []
    for ring in value:
        shown = show(ring)
        points = _ring_points(ring, shown)
        if not skip_validation:
            err = loop_error(points)
            if err is not None:
                raise GeoError(f"Loop is not valid: {shown} {err}")
        loop = s2.S2.S2Loop(points)
        loop.Normalize()   # a loop larger than a hemisphere is read the other way round
        if not skip_validation and loops and not loops[0].Contains(loop):
            raise GeoError("Secondary loops not contained by first exterior loop - secondary "
                           f"loops must be holes: {shown} first loop: {show(value[0])}")
        loops.append(loop)
        rings.append(points)
    if not loops:
        raise GeoError("Polygon has no loops.")
    if not skip_validation:
        err = _polygon_loops_error(loops, rings)
        if err is not None:
            raise GeoError(f"Polygon isn't valid: {err} {show(value)}")
    polygon = s2.S2.S2Polygon()
    polygon.InitNested(loops)
    if skip_validation:
        return polygon
    err = _shared_vertices_error(rings)
    if err is not None:
        raise GeoError(f"{err}: {show(value)}")
    if polygon.num_loops() > 1 and polygon.GetLastDescendant(0) < polygon.num_loops() - 1:
        raise GeoError(f"Only one exterior polygon loop is allowed: {show(value)}")
    if any(polygon.loop(i).depth() > 1 for i in range(polygon.num_loops())):
        raise GeoError(f"Polygon interior loops cannot be nested: {show(value)}")
    return polygon


def _polygon_loops_error(loops: list, rings: list) -> str | None:
    """S2Polygon::IsValid on normalized loops: no shared edge, no crossing boundaries."""
    if len(loops) > 1:
        edges: dict = {}
        for i, ring in enumerate(rings):
            n = len(ring)
            for j in range(n):
                a, b = s2.point_key(ring[j]), s2.point_key(ring[(j + 1) % n])
                key = (a, b) if a <= b else (b, a)
                if key in edges:
                    li, ej = edges[key]
                    return f"Duplicate edge: loop {i}, edge {j} and loop {li}, edge {ej}"
                edges[key] = (i, j)
    for i in range(len(loops)):
        for j in range(i + 1, len(loops)):
            a, b = loops[i], loops[j]
            if a.Intersects(b) and not a.Contains(b) and not b.Contains(a):
                return f"Loop {i} crosses loop {j}"
    return None


def _shared_vertices_error(rings: list) -> str | None:
    """S2Polygon::IsNormalized: a hole may touch its shell at one vertex at most."""
    shell = {s2.point_key(p) for p in rings[0]}
    for i in range(1, len(rings)):
        if sum(1 for p in rings[i] if s2.point_key(p) in shell) > 1:
            return f"Loop {i} shares more than one vertex with its parent loop 0"
    return None


def _big_polygon(value: Any):
    if not isinstance(value, (list, tuple)):
        raise GeoError("Coordinates of polygon must be an array, instead got type "
                       f"{type_of(value)}")
    if len(value) != 1:
        raise GeoError("Only one simple loop is allowed in a big polygon, instead provided "
                       f"{len(value)} loops: {show(value)}")
    points = _ring_points(value[0], show(value))
    err = loop_error(points)
    if err is not None:
        raise GeoError(f"Loop is not valid: {show(value)} {err}")
    # Strict winding: the interior is on the left of the ring as written, never normalized.
    return s2.S2.S2Polygon(s2.S2.S2Loop(points))


# --- GeoJSON objects ------------------------------------------------------------------------

def geojson_type(obj: Mapping) -> str | None:
    t = obj.get("type") if isinstance(obj, Mapping) else None
    return t if isinstance(t, str) and t in GEOJSON_TYPES else None


def parse_geojson(obj: Mapping, skip_validation: bool = False) -> Geometry:
    """A GeoJSON object (GeometryContainer::parseFromGeoJSON)."""
    kind = geojson_type(obj)
    if kind is None:
        raise GeoError(f"unknown GeoJSON type: {show_document(obj)}")
    return _PARSERS[kind](obj, skip_validation)


def _parse_point(obj: Mapping, skip: bool) -> Geometry:
    return geojson_point(obj)


def _parse_line(obj: Mapping, skip: bool) -> Geometry:
    _crs(obj)
    return Geometry("LineString", CRS.SPHERE, lines=[_line(_field(obj, "coordinates"), skip)])


def _parse_polygon(obj: Mapping, skip: bool) -> Geometry:
    crs = _crs(obj, allow_strict=True)
    coords = _field(obj, "coordinates")
    if crs == CRS.STRICT_SPHERE:
        return Geometry("Polygon", CRS.STRICT_SPHERE, big_polygon=_big_polygon(coords))
    return Geometry("Polygon", CRS.SPHERE, polygons=[_polygon(coords, skip)])


def _parse_multipoint(obj: Mapping, skip: bool) -> Geometry:
    _crs(obj)
    points = _coordinates(_field(obj, "coordinates"))
    if not points:
        raise GeoError("MultiPoint coordinates must have at least 1 element")
    return Geometry("MultiPoint", CRS.SPHERE, points=points,
                    cells=[s2.leaf_cell(p) for p in points])


def _multi(obj: Mapping, kind: str) -> Sequence:
    _crs(obj)
    coords = _field(obj, "coordinates")
    if not isinstance(coords, (list, tuple)):
        raise GeoError(f"{kind} coordinates must be an array, instead got type {type_of(coords)}")
    if not coords:
        raise GeoError(f"{kind} coordinates must have at least 1 element")
    return coords


def _parse_multiline(obj: Mapping, skip: bool) -> Geometry:
    coords = _multi(obj, "MultiLineString")
    return Geometry("MultiLineString", CRS.SPHERE, lines=[_line(c, skip) for c in coords])


def _parse_multipolygon(obj: Mapping, skip: bool) -> Geometry:
    coords = _multi(obj, "MultiPolygon")
    return Geometry("MultiPolygon", CRS.SPHERE, polygons=[_polygon(c, skip) for c in coords])


def _parse_collection(obj: Mapping, skip: bool) -> Geometry:
    members = _field(obj, "geometries")
    if not isinstance(members, (list, tuple)):
        raise GeoError("GeometryCollection geometries must be an array, instead got type "
                       f"{type_of(members)}")
    if not members:
        raise GeoError("GeometryCollection geometries must have at least 1 element")
    out = Geometry("GeometryCollection", CRS.SPHERE)
    for i, member in enumerate(members):
        if not isinstance(member, Mapping):
            raise GeoError(f'Element {i} of "geometries" must be an object, instead got type '
                           f"{type_of(member)}: {show(member)}")
        kind = geojson_type(member)
        if kind is None:
            raise GeoError(f"Unknown GeoJSON type: {show(member)}")
        if kind == "GeometryCollection":
            raise GeoError(f"GeometryCollections cannot be nested: {show(member)}")
        part = _PARSERS[kind](member, skip)
        if part.crs == CRS.STRICT_SPHERE:
            raise GeoError("Strict winding order CRS is only supported by polygon")
        out.points += part.points
        out.cells += part.cells
        out.lines += part.lines
        out.polygons += part.polygons
    return out


_PARSERS = {"Point": _parse_point, "LineString": _parse_line, "Polygon": _parse_polygon,
            "MultiPoint": _parse_multipoint, "MultiLineString": _parse_multiline,
            "MultiPolygon": _parse_multipolygon, "GeometryCollection": _parse_collection}


def parse_stored(name: str, value: Any, skip_validation: bool = False) -> Geometry:
    """A document's geo field value (GeometryContainer::parseFromStorage).

    `[x, y]`, `{x: .., y: ..}` and any document whose first value is a number are legacy
    points (extra elements allowed); any other document must be GeoJSON.
    """
    if not is_object(value):
        raise GeoError(f"geo element must be an array or object: {show_element(name, value)}")
    if isinstance(value, (list, tuple)) or is_geo_number(first_element(value)):
        return legacy_point(value, allow_extra=True)
    return parse_geojson(value, skip_validation)
