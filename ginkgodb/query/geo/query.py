"""Geo query operands: $geoWithin / $geoIntersects regions and $near / $nearSphere / $geoNear.

`parse_geo_predicate({"$geoWithin": {...}})` and `parse_near({"$near": ..., "$maxDistance": ..})`
take the operand document of a field, as mongod's GeoExpression and GeoNearExpression do, and
raise CommandError with mongod's code and message (2 BadValue for most, numbered uasserts for
some legacy near checks).
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...errors import CommandError, ErrorCode
from . import flat, predicates, s2
from .codes import GeoCode
from .geojson import (
    MISSING,
    GeoError,
    elements,
    is_geo_number,
    is_object,
    lng_lat_point,
    parse_flat_point,
    parse_geojson,
    parse_point,
    parse_stored,
    show,
    show_document,
    show_element,
    to_float,
)
from .shapes import CRS, Geometry

WITHIN = "within"
INTERSECTS = "intersects"

_SPECIFIERS = ("$box", "$center", "$polygon", "$centerSphere", "$geometry")
_NEAR_OPERATORS = ("$near", "$nearSphere", "$geoNear")


def _bad(message: str) -> CommandError:
    return CommandError(ErrorCode.BadValue, message)


@dataclass(eq=False)
class GeoPredicate:
    """A parsed $geoWithin or $geoIntersects: `matches(doc_geometry)` is the exact test."""

    predicate: str
    region: Geometry

    def matches(self, doc: Geometry) -> bool:
        if self.predicate == WITHIN:
            return predicates.within(self.region, doc)
        return predicates.intersects(self.region, doc)

    def matches_value(self, field: str, value: Any) -> bool:
        """One field value of a document: a value that is no valid geometry never matches."""
        if not is_object(value):
            return False
        try:
            geometry = parse_stored(field, value)
        except GeoError:
            return False
        return self.matches(geometry)


def _radius(value: Any) -> float:
    if not is_geo_number(value) or not to_float(value) >= 0:
        shown = "EOO" if value is MISSING else show(value)
        raise GeoError(f"Radius must be a non-negative number: {shown}")
    return to_float(value)


def parse_region(name: str, value: Any) -> Geometry:
    """One geo specifier (`$box`, `$center`, `$polygon`, `$centerSphere`, `$geometry`)."""
    if name not in _SPECIFIERS or not is_object(value):
        raise GeoError(f"unknown geo specifier: {show_element(name, value)}")
    items = elements(value)
    if name == "$box":
        a = parse_flat_point(items[0] if items else MISSING)
        b = parse_flat_point(items[1] if len(items) > 1 else MISSING)
        return Geometry("Box", CRS.FLAT, box=flat.box_from_corners(a, b))
    if name == "$polygon":
        vertices = [parse_flat_point(v) for v in items]
        if len(vertices) < 3:
            raise GeoError(f"Polygon must have at least 3 points, instead got {len(vertices)} "
                           "vertices")
        return Geometry("LegacyPolygon", CRS.FLAT, flat_polygon=vertices)
    if name in ("$center", "$centerSphere"):
        x, y = parse_flat_point(items[0] if items else MISSING)
        center = lng_lat_point(x, y) if name == "$centerSphere" else None
        radius = _radius(items[1] if len(items) > 1 else MISSING)
        if len(items) > 2:
            raise GeoError("Only 2 fields allowed for circular region, but more were provided")
        if center is None:
            return Geometry("Center", CRS.FLAT, circle=(x, y, radius))
        return Geometry("CenterSphere", CRS.SPHERE, cap=s2.cap(center, radius), cap_radius=radius,
                        flat_point=(x, y))
    # $geometry: a legacy point, or GeoJSON.
    if isinstance(value, (list, tuple)) or is_geo_number(items[0] if items else MISSING):
        return parse_point(value, allow_extra=False)
    return parse_geojson(value)


def parse_geo_predicate(operand: Mapping) -> GeoPredicate:
    """`{$geoWithin: {...}}` (or `$within`) or `{$geoIntersects: {...}}`."""
    names = list(operand)
    values = list(operand.values())
    if len(names) > 1:
        raise _bad(f"can't parse extra field: {show_element(names[1], values[1])}")
    keyword = names[0] if names else None
    if keyword in ("$geoWithin", "$within"):
        predicate = WITHIN
    elif keyword == "$geoIntersects":
        predicate = INTERSECTS
    else:
        raise _bad(f"invalid geo query predicate: {show_document(operand)}")
    spec = values[0]
    if not isinstance(spec, Mapping):
        raise _bad("geometry must be an object")
    region = None
    for name, value in spec.items():
        if region is not None and keyword == "$geoWithin":
            raise _bad(f"$geoWithin doesn't accept multiple shapes {show_element(keyword, spec)}")
        if name == "$uniqueDocs":
            continue   # deprecated and ignored by mongod too (it only logs a warning)
        try:
            region = parse_region(name, value)
        except GeoError as exc:
            raise _bad(exc.reason) from None
    if region is None:
        raise _bad("geo query doesn't have any geometry")
    if predicate == WITHIN and not region.supports_contains():
        raise _bad(f"$within not supported with provided geometry: {show_document(operand)}")
    if region.crs == CRS.STRICT_SPHERE:
        region = Geometry("Polygon", CRS.SPHERE, big_polygon=region.big_polygon)
    if predicate == INTERSECTS:
        if not region.can_project(CRS.SPHERE):
            raise _bad(f"$geoIntersect not supported with provided geometry: "
                       f"{show_document(operand)}")
        region = region.projected(CRS.SPHERE)
    return GeoPredicate(predicate, region)


# --- near -----------------------------------------------------------------------------------

@dataclass(eq=False)
class NearQuery:
    """A parsed $near/$nearSphere/$geoNear operand.

    `center` is a Point geometry (a GeoJSON one without its leaf cell: it is only measured
    from); `spherical` says whether distances are on the sphere;
    `units_are_radians` whether min/max distances (and reported distances) are radians rather
    than meters (spherical) or coordinate units (flat). GeoJSON points are always spherical in
    meters; legacy pairs are flat for $near and radians for $nearSphere.
    """

    center: Geometry
    min_distance: float
    max_distance: float
    is_near_sphere: bool
    units_are_radians: bool

    @property
    def is_geojson(self) -> bool:
        return self.center.crs == CRS.SPHERE and not self.units_are_radians

    def spherical(self, index_kind: str) -> bool:
        """Distances on the sphere? Always for 2dsphere; for 2d only with $nearSphere."""
        return index_kind == "2dsphere" or self.is_near_sphere or self.is_geojson

    def sphere_center(self):
        return self.center.projected(CRS.SPHERE).points[0]

    def to_radians(self, distance: float) -> float:
        """A min/max distance of this query as radians on the sphere."""
        if self.units_are_radians or not self.is_geojson:
            return distance
        return distance / s2.EARTH_RADIUS_METERS


def _point_with_max_distance(value: Any) -> tuple[tuple[float, float], float] | None:
    """`[x, y, maxDistance]`: three numbers (mongod's parsePointWithMaxDistance)."""
    if not is_object(value):
        return None
    items = elements(value)
    if len(items) != 3 or not all(is_geo_number(v) for v in items):
        return None
    return (to_float(items[0]), to_float(items[1])), to_float(items[2])


def _legacy_near(operand: Mapping, out: dict) -> bool:
    has_geometry = False
    for name, value in operand.items():
        if name in _NEAR_OPERATORS:
            if not is_object(value):
                return False
            if type(value) is dict and len(value) == 1 and "$geometry" in value:
                continue   # the GeoJSON form: no legacy point (parse_point would fail, costly)
            center = None
            try:
                center = parse_point(value, allow_extra=False)
            except GeoError:
                triple = _point_with_max_distance(value)
                if triple is not None:
                    center = Geometry("Point", CRS.FLAT, flat_point=triple[0])
                    out["max"] = triple[1]
            if center is not None:
                if out["max"] < 0:
                    raise CommandError(GeoCode.NEAR_MAX_DISTANCE_NEGATIVE,
                                       "max distance must be non-negative")
                out["center"] = center
                out["sphere"] = name == "$nearSphere"
                has_geometry = True
        elif name == "$minDistance":
            if not is_geo_number(value):
                raise CommandError(GeoCode.MIN_DISTANCE_NOT_NUMBER, "$minDistance must be a number")
            out["min"] = to_float(value)
            if not out["min"] >= 0:
                raise CommandError(GeoCode.MIN_DISTANCE_NEGATIVE, "$minDistance must be non-negative")
        elif name == "$maxDistance":
            if not is_geo_number(value):
                raise CommandError(GeoCode.MAX_DISTANCE_NOT_NUMBER, "$maxDistance must be a number")
            out["max"] = to_float(value)
            if not out["max"] >= 0:
                raise CommandError(GeoCode.MAX_DISTANCE_NEGATIVE, "$maxDistance must be non-negative")
        elif name == "$uniqueDocs":
            continue   # deprecated; mongod logs and ignores it
        else:
            raise CommandError(GeoCode.NEAR_BAD_ARGUMENT,
                               f"invalid argument in geo near query: {name}")
    return has_geometry


def _new_near(operand: Mapping, out: dict) -> None:
    items = list(operand.items())
    if not items:
        raise _bad("empty geo near query object")
    if len(items) > 1:
        raise _bad("geo near accepts just one argument when querying for a GeoJSON point. "
                   f"Extra field found: {show_element(*items[1])}")
    name, arg = items[0]
    if not is_object(arg):
        raise _bad("geo near query argument is not an object")
    if name not in _NEAR_OPERATORS:
        raise _bad(f"invalid geo near query operator: {name}")
    has_geometry = False
    for field, value in (arg.items() if isinstance(arg, Mapping) else enumerate(arg)):
        if field == "$geometry":
            if is_object(value):
                try:
                    center = parse_point(value, allow_extra=False, with_cell=False)
                except GeoError as exc:
                    raise _bad(f"invalid point in geo near query $geometry argument: "
                               f"{show(value)}  {exc.reason}") from None
                if center.crs != CRS.SPHERE:
                    raise _bad(f"$near requires geojson point, given {show(value)}")
                out["center"] = center
                has_geometry = True
        elif field in ("$minDistance", "$maxDistance"):
            if not is_geo_number(value):
                raise _bad(f"{field} must be a number")
            number = to_float(value)
            if not (number >= 0 and math.isfinite(number)):
                raise _bad(f"{field} must be non-negative")
            out["min" if field == "$minDistance" else "max"] = number
        else:
            raise _bad(f"invalid argument in geo near query: {field}")
    if not has_geometry:
        raise _bad("$geometry is required for geo near query")


def parse_near(operand: Mapping) -> NearQuery:
    """A field's near operand: `{$near: [x, y], $maxDistance: d}`, `{$near: {$geometry: ..}}`, ..."""
    out: dict = {"min": 0.0, "max": math.inf, "sphere": False, "center": None}
    if not _legacy_near(operand, out):
        out = {"min": 0.0, "max": math.inf, "sphere": False, "center": None}
        _new_near(operand, out)
    center: Geometry = out["center"]
    radians = False
    if out["sphere"]:
        if not center.can_project(CRS.SPHERE):
            raise _bad("Legacy point is out of bounds for spherical query")
        radians = center.crs != CRS.SPHERE
        center = center.projected(CRS.SPHERE)
    return NearQuery(center, out["min"], out["max"], out["sphere"], radians)
