"""Exact geo predicates: $geoWithin, $geoIntersects and the distance of $near (geometry_container.cpp).

`region` is the query's geometry, `doc` a document's. Spherical tests are S2's (edges are
geodesics); a point on a polygon's edge or vertex counts as inside, because mongod also asks
whether the polygon may intersect the point's leaf cell. Flat tests are in `flat`.
"""
from __future__ import annotations

import math

from . import flat, s2
from .shapes import CRS, Geometry

# --- $geoWithin -----------------------------------------------------------------------------

def within(region: Geometry, doc: Geometry) -> bool:
    """Is every part of `doc` inside `region`? (GeoMatchExpression WITHIN.)"""
    if doc.crs == CRS.STRICT_SPHERE:
        return False   # a stored big polygon never matches
    if not doc.can_project(region.crs):
        return False
    doc = doc.projected(region.crs)
    if region.crs == CRS.FLAT:
        return _flat_within(region, doc)
    parts = [(_point_within, (p, c)) for p, c in zip(doc.points, doc.cells)]
    parts += [(_line_within, line) for line in doc.lines]
    parts += [(_polygon_within, poly) for poly in doc.polygons]
    return bool(parts) and all(test(region, part) for test, part in parts)


def _flat_within(region: Geometry, doc: Geometry) -> bool:
    if not doc.is_point:
        return False
    x, y = doc.flat_point
    if region.box is not None:
        return flat.box_contains_point(region.box, x, y)
    if region.circle is not None:
        cx, cy, r = region.circle
        return flat.distance_within(cx, cy, x, y, r)
    if region.flat_polygon is not None:
        return flat.polygon_contains_point(region.flat_polygon, x, y)
    return False


def _point_within(region: Geometry, part) -> bool:
    p, cell = part
    if region.cap is not None:
        return region.cap.MayIntersect(cell)
    if region.big_polygon is not None:
        return region.big_polygon.Contains(p) or region.big_polygon.MayIntersect(cell)
    return any(poly.Contains(p) or poly.MayIntersect(cell) for poly in region.polygons)


def _line_within(region: Geometry, line) -> bool:
    if region.cap is not None:
        return _within_cap(region, line)
    if region.big_polygon is not None:
        return region.big_polygon.Contains(line)
    return any(poly.Contains(line) for poly in region.polygons)


def _polygon_within(region: Geometry, polygon) -> bool:
    if region.cap is not None:
        return _within_cap(region, polygon)
    if region.big_polygon is not None:
        return region.big_polygon.Contains(polygon)
    return any(poly.Contains(polygon) for poly in region.polygons)


def _within_cap(region: Geometry, shape) -> bool:
    """A line or polygon is in a cap iff it keeps its distance from the cap's complement.

    The complement of a cap of radius r around c is the cap of radius pi - r around -c.
    """
    lng, lat = s2.lng_lat(region.cap.center())
    antipode = s2.point(lng + 180.0, -lat)
    return _shape_distance(antipode, shape) >= math.pi - region.cap_radius


# --- $geoIntersects -------------------------------------------------------------------------

def intersects(region: Geometry, doc: Geometry) -> bool:
    """Does any part of `doc` meet any part of `region`? (GeoMatchExpression INTERSECT.)"""
    if doc.crs == CRS.STRICT_SPHERE:
        return False
    if not doc.can_project(CRS.SPHERE):
        return False
    doc = doc.projected(CRS.SPHERE)
    for cell in doc.cells:
        if _region_meets_cell(region, cell):
            return True
    for line in doc.lines:
        if _region_meets_line(region, line):
            return True
    for polygon in doc.polygons:
        if _region_meets_polygon(region, polygon):
            return True
    return False


def _region_meets_cell(region: Geometry, cell) -> bool:
    if any(c.MayIntersect(cell) for c in region.cells):
        return True
    if any(line.MayIntersect(cell) for line in region.lines):
        return True
    if region.big_polygon is not None and region.big_polygon.MayIntersect(cell):
        return True
    return any(poly.MayIntersect(cell) for poly in region.polygons)


def _region_meets_line(region: Geometry, line) -> bool:
    if any(line.MayIntersect(c) for c in region.cells):
        return True
    if any(line.Intersects(other) for other in region.lines):
        return True
    if region.big_polygon is not None and region.big_polygon.Intersects(line):
        return True
    return any(poly.Intersects(line) for poly in region.polygons)


def _region_meets_polygon(region: Geometry, polygon) -> bool:
    if any(polygon.MayIntersect(c) for c in region.cells):
        return True
    if any(polygon.Intersects(line) for line in region.lines):
        return True
    if region.big_polygon is not None and region.big_polygon.Intersects(polygon):
        return True
    return any(polygon.Intersects(poly) for poly in region.polygons)


# --- distances ------------------------------------------------------------------------------

def _shape_distance(p, shape) -> float:
    """Radians from a point to the closest point of a polyline or polygon (0 inside)."""
    if isinstance(shape, s2.S2.S2Polyline):
        projected, _ = shape.Project(p)
        return s2.angle_between(p, projected)
    return shape.GetDistance(p).radians()


def sphere_distance(center, doc: Geometry) -> float:
    """Radians from an S2 point to the closest point of a spherical document geometry."""
    best = math.inf
    for q in doc.points:
        best = min(best, s2.angle_between(center, q))
    for shape in doc.lines + doc.polygons:
        best = min(best, _shape_distance(center, shape))
    return best


def distance_meters(center, doc: Geometry) -> float:
    """$near/$geoNear distance in meters on MongoDB's earth radius (GeoJSON queries)."""
    return sphere_distance(center, doc) * s2.EARTH_RADIUS_METERS


def flat_distance(x: float, y: float, doc: Geometry) -> float | None:
    """2d $near distance in coordinate units; only points have one (None otherwise)."""
    if not doc.is_point:
        return None
    return flat.distance(x, y, *doc.flat_point)
