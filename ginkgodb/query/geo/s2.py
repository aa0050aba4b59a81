"""The S2 library (s2geometry, Google's bindings) behind every spherical computation here.

Nothing in this package does spherical geometry by hand: points, loops, polygons, polylines,
caps, cells, coverings and distances all come from S2. This module only adapts degrees and
MongoDB's (longitude, latitude) order to S2's objects, and cell ids to signed index keys.
"""
from __future__ import annotations

import math

import s2geometry as _s2

S2 = _s2

# MongoDB's radius of the earth (geoconstants.h: kRadiusOfEarthInMeters = 6378.1 km). It is not
# S2's mean radius (6371.01 km): $near distances in meters and $centerSphere conversions use this.
EARTH_RADIUS_METERS = 6378.1 * 1000

MAX_CELL_LEVEL = 30
# S2's kAvgEdge metric for the quadratic projection (the derivative of the average edge length
# of a level-k cell, in radians, is AVG_EDGE_DERIV * 2**-k).
AVG_EDGE_DERIV = 1.459213746386106062

_SIGN = 1 << 63
_U64 = 1 << 64


def point(lng: float, lat: float):
    """The unit vector of a (longitude, latitude) pair in degrees (S2 takes latitude first)."""
    return _s2.S2LatLng.FromDegrees(lat, lng).Normalized().ToPoint()


def lng_lat(p) -> tuple[float, float]:
    ll = _s2.S2LatLng(p)
    return ll.lng().degrees(), ll.lat().degrees()


def same_point(a, b) -> bool:
    """Exact equality of two S2 points (S2Point has no value equality in the bindings)."""
    return a.x() == b.x() and a.y() == b.y() and a.z() == b.z()


def point_key(p) -> tuple[float, float, float]:
    return (p.x(), p.y(), p.z())


def angle_to(center, lng: float, lat: float) -> float:
    """`angle_between(center, point(lng, lat))` with fewer binding calls: a latitude and
    longitude strictly inside their ranges are already normalized."""
    ll = _s2.S2LatLng.FromDegrees(lat, lng)
    if not (-90.0 < lat < 90.0 and -180.0 < lng < 180.0):
        ll = ll.Normalized()
    return _s2.S1Angle(center, ll.ToPoint()).radians()


DEGREE = math.pi / 180   # S1Angle::Degrees multiplies by this constant


def unit_vector(lng: float, lat: float) -> tuple[float, float, float]:
    """S2LatLng::FromDegrees(lat, lng).ToPoint() in plain floats, for a longitude and latitude
    inside their ranges (Normalized() changes nothing there): the same operations in the same
    order, so the same bits as the bindings (checked in the tests), without three calls."""
    phi, theta = lat * DEGREE, lng * DEGREE
    cos_phi = math.cos(phi)
    return (math.cos(theta) * cos_phi, math.sin(theta) * cos_phi, math.sin(phi))


def vector_of(p) -> tuple[float, float, float]:
    return (p.x(), p.y(), p.z())


def vector_angle(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    """S1Angle(a, b).radians() of two unit vectors: atan2(|a x b|, a . b), as Vector3::Angle."""
    ax, ay, az = a
    bx, by, bz = b
    cx, cy, cz = ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx
    return math.atan2(math.sqrt(cx * cx + cy * cy + cz * cz), ax * bx + ay * by + az * bz)


def angle_between(a, b) -> float:
    """Great-circle angle between two points, in radians."""
    return _s2.S1Angle(a, b).radians()


def cap(center, radians: float):
    return _s2.S2Cap(center, _s2.S1Angle.Radians(radians))


def leaf_cell(p):
    """The level-30 cell holding a point: mongod's region for a point (PointWithCRS.cell)."""
    return _s2.S2Cell(_s2.S2CellId(p))


def polyline(points):
    line = _s2.S2Polyline()
    line.InitFromS2Points(list(points))
    return line


def to_signed(cell_id: int) -> int:
    """An unsigned 64-bit cell id as the signed long mongod stores (static_cast<long long>)."""
    return cell_id - _U64 if cell_id & _SIGN else cell_id


def to_unsigned(key: int) -> int:
    return key + _U64 if key < 0 else key


def closest_level(value: float) -> int:
    """S2::kAvgEdge.GetClosestLevel(value): the level whose average edge is nearest `value`.

    S2 computes it as GetLevelForMaxValue(sqrt(2) * value) = -ilogb(sqrt(2)*value/deriv),
    clamped to [0, 30]; ilogb is the exponent frexp gives, minus one.
    """
    scaled = math.sqrt(2) * value
    if scaled <= 0:
        return MAX_CELL_LEVEL
    exponent = math.frexp(scaled / AVG_EDGE_DERIV)[1] - 1
    return max(0, min(MAX_CELL_LEVEL, -exponent))


def avg_edge(level: int) -> float:
    """S2::kAvgEdge.GetValue(level), in radians."""
    return math.ldexp(AVG_EDGE_DERIV, -level)
