"""Legacy 2d index keys: mongod's GeoHash of a coordinate pair, and the ranges of a flat region.

A point (x, y) in [min, max] is scaled to two unsigned 32-bit integers (x' = (x - min) * 2**32
/ (max - min), truncated; a value equal to max is first moved inside by half the index's error),
and the top `bits` bits of each are interleaved, x first, into the top 2*bits bits of a 64-bit
hash (the other bits are 0). The key is that hash as 8 big-endian bytes in BinData subtype 128
(bdtCustom), encoded by keycodec (docs/design/geo-index.md, "2d key format", DO NOT CHANGE).
A cell of level L (L bits per axis) is the hash range [h, h | (2**(64-2L) - 1)].
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bson.binary import Binary

from ...bsonutil import keycodec
from ...errors import CommandError, ErrorCode
from .codes import GeoCode
from .geojson import cpp_double, elements, is_geo_number, is_object, show, show_document, to_float

BINDATA_CUSTOM = 128
_NUM_BUCKETS = 4.0 * 1024 * 1024 * 1024
_U64_MASK = (1 << 64) - 1
CAUSED_BY = " :: caused by :: "


@dataclass(frozen=True)
class TwoDParams:
    """A 2d index's `bits`, `min` and `max`, with mongod's derived scaling and error."""

    bits: int = 26
    min: float = -180.0
    max: float = 180.0

    @property
    def scaling(self) -> float:
        return _NUM_BUCKETS / (self.max - self.min)

    @property
    def error(self) -> float:
        """Diagonal of a finest cell plus 1/1000 of a bucket (GeoHashConverter::_error)."""
        edge = math.ldexp(self.max - self.min, -self.bits)
        return math.hypot(edge, edge) + 0.001 / self.scaling

    def cell_edge(self, level: int) -> float:
        return math.ldexp(self.max - self.min, -level)


def _number_option(spec: Mapping, name: str, default: float) -> float:
    if name not in spec:
        return default
    value = spec[name]
    if not is_geo_number(value):
        raise CommandError(ErrorCode.InvalidOptions,
                           f"wrong type for '{name}' field, expected number, found "
                           f"{name}: {show(value)}")
    return to_float(value)


def params_from_spec(spec: Mapping) -> TwoDParams:
    """2d parameters from an index specification, checked with mongod's messages (72)."""
    bits = _number_option(spec, "bits", 26)
    lo = _number_option(spec, "min", -180.0)
    hi = _number_option(spec, "max", 180.0)
    bits = int(bits)
    if bits < 1 or bits > 32:
        raise CommandError(ErrorCode.InvalidOptions, "bits for hash must be > 0 and <= 32, but "
                           f"{bits} bits were specified")
    if not lo < hi or math.isinf(lo) or math.isinf(hi):
        raise CommandError(ErrorCode.InvalidOptions, "region for hash must be valid and have "
                           f"positive area, but [{cpp_double(lo)}, {cpp_double(hi)}] was specified")
    scaling = _NUM_BUCKETS / (hi - lo)
    if not scaling > 0 or math.isinf(scaling):
        raise CommandError(ErrorCode.InvalidOptions,
                           f"range [{cpp_double(lo)}, {cpp_double(hi)}] is too small.")
    return TwoDParams(bits, lo, hi)


def _interleave(v: int) -> int:
    """Spread the 32 bits of v over the even bits of a 64-bit word (bit 31 -> bit 62)."""
    out = 0
    for i in range(32):
        if v >> i & 1:
            out |= 1 << (2 * i)
    return out


def _deinterleave(h: int) -> int:
    out = 0
    for i in range(32):
        if h >> (2 * i) & 1:
            out |= 1 << i
    return out


_TOP = (1 << 32) - 1


def scale(value: float, params: TwoDParams) -> int:
    """A coordinate in [min, max] as mongod's unsigned 32-bit hash scale."""
    if value == params.max:
        value -= params.error / 2
    return max(0, min(_TOP, int((value - params.min) * params.scaling)))


def hash_scaled(x: int, y: int, bits: int) -> int:
    """Interleave two 32-bit scaled coordinates, keeping the top `bits` bits of each."""
    full = (_interleave(x) << 1) | _interleave(y)
    return full & (_U64_MASK << (64 - 2 * bits)) & _U64_MASK


def hash_point(x: float, y: float, params: TwoDParams) -> int:
    return hash_scaled(scale(x, params), scale(y, params), params.bits)


def unhash(h: int, params: TwoDParams) -> tuple[float, float]:
    """The low corner of a hash's cell, in coordinates."""
    return (_deinterleave(h >> 1) / params.scaling + params.min,
            _deinterleave(h) / params.scaling + params.min)


def cell_range(h: int, level: int) -> tuple[int, int]:
    """Inclusive hash range of the level-`level` cell holding hash h."""
    suffix = (1 << (64 - 2 * level)) - 1 if level < 32 else 0
    lo = h & ~suffix & _U64_MASK
    return lo, lo | suffix


def encode_hash(h: int) -> bytes:
    """A 2d key component: keycodec's encoding of BinData(128, 8 big-endian bytes)."""
    return keycodec.encode_value(hash_key_value(h))


def hash_key_value(h: int) -> Binary:
    return Binary(h.to_bytes(8, "big"), BINDATA_CUSTOM)


# --- document keys --------------------------------------------------------------------------

def _point_hash(location: Any, document: Mapping, params: TwoDParams) -> int:
    items = elements(location)
    src = CAUSED_BY + show_document(document)
    if not items:
        raise CommandError(GeoCode.GEO_FIELD_EMPTY, "geo field is empty" + src)
    if len(items) < 2:
        raise CommandError(GeoCode.GEO_FIELD_ONE_ELEMENT, "geo field only has 1 element" + src)
    x, y = items[0], items[1]
    if not (is_geo_number(x) and is_geo_number(y)):
        raise CommandError(GeoCode.GEO_VALUES_NOT_PAIRS,
                           "geo values must be 'legacy coordinate pairs' for 2d indexes" + src)
    fx, fy = to_float(x), to_float(y)
    if not (params.min <= fx <= params.max and params.min <= fy <= params.max):
        raise CommandError(GeoCode.POINT_NOT_IN_INTERVAL,
                           f"point not in interval of [ {cpp_double(params.min)}, "
                           f"{cpp_double(params.max)} ]" + src)
    return hash_point(fx, fy, params)


def document_locations(value: Any) -> list:
    """The points of a 2d field value: one pair, or an array/document of pairs."""
    if not is_object(value):
        return []
    items = elements(value)
    if items and is_object(items[0]):
        for item in items:
            if not is_object(item):
                raise CommandError(GeoCode.LOCATION_ARRAY_FORMAT, "location object expected, "
                                   "location array not in correct format")
        return items
    return [value]


def index_hashes(value: Any, document: Mapping, params: TwoDParams) -> list[int]:
    """The geohashes a 2d index stores for one field value (one per location)."""
    return [_point_hash(loc, document, params) for loc in document_locations(value)]


def query_point_hash(x: float, y: float, params: TwoDParams) -> int:
    """A query point's hash, refusing points outside the index range (16433)."""
    if not (params.min <= x <= params.max and params.min <= y <= params.max):
        raise CommandError(GeoCode.QUERY_POINT_NOT_IN_INTERVAL,
                           f"point not in interval of [ {cpp_double(params.min)}, "
                           f"{cpp_double(params.max)} ]{CAUSED_BY}[ {show(x)}, {show(y)} ]")
    return hash_point(x, y, params)


# --- query ranges ---------------------------------------------------------------------------

QUERY_MAX_CELLS = 16   # internalGeoPredicateQuery2DMaxCoveringCells / ...Near...


def box_ranges(box: tuple[float, float, float, float], params: TwoDParams,
               max_cells: int = QUERY_MAX_CELLS) -> list[tuple[int, int]]:
    """Hash ranges holding every indexed point inside a flat bounding box.

    Every cell of one level that the box's corners span (the corners are hashed as points, so
    rounding matches the keys exactly), at the finest level giving at most `max_cells` cells;
    adjacent cells along the hash order are merged into one range.
    """
    lo_x, lo_y = max(box[0], params.min), max(box[1], params.min)
    hi_x, hi_y = min(box[2], params.max), min(box[3], params.max)
    if lo_x > hi_x or lo_y > hi_y:
        return []
    # scale() moves `max` itself inside the range, below points just under it: a box reaching
    # `max` reaches the last bucket.
    sx0, sy0 = scale(lo_x, params), scale(lo_y, params)
    sx1 = _TOP if hi_x == params.max else scale(hi_x, params)
    sy1 = _TOP if hi_y == params.max else scale(hi_y, params)
    level = params.bits
    while level > 0:
        shift = 32 - level
        count = ((sx1 >> shift) - (sx0 >> shift) + 1) * ((sy1 >> shift) - (sy0 >> shift) + 1)
        if count <= max_cells:
            break
        level -= 1
    shift = 32 - level
    ranges = []
    for cx in range(sx0 >> shift, (sx1 >> shift) + 1):
        for cy in range(sy0 >> shift, (sy1 >> shift) + 1):
            h = hash_scaled(cx << shift, cy << shift, level) if level else 0
            ranges.append(cell_range(h, level))
    ranges.sort()
    merged: list[tuple[int, int]] = []
    for lo, hi in ranges:
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    return merged


def region_box(region) -> tuple[float, float, float, float]:
    """The flat bounding box of a 2d query region (mongod's R2BoxRegion bounds)."""
    from .shapes import CRS
    if region.box is not None:
        return region.box
    if region.flat_polygon is not None:
        xs = [v[0] for v in region.flat_polygon]
        ys = [v[1] for v in region.flat_polygon]
        return (min(xs), min(ys), max(xs), max(ys))
    if region.circle is not None:
        x, y, r = region.circle
        return (x - r, y - r, x + r, y + r)
    if region.cap is not None:
        rect = region.cap.GetRectBound()
        lng_lo, lng_hi = rect.lng_lo().degrees(), rect.lng_hi().degrees()
        if lng_lo > lng_hi:   # the cap crosses the antimeridian: every longitude
            lng_lo, lng_hi = -180.0, 180.0
        return (lng_lo, rect.lat_lo().degrees(), lng_hi, rect.lat_hi().degrees())
    if region.is_point and region.flat_point is not None:
        x, y = region.flat_point
        return (x, y, x, y)
    raise ValueError(f"a {region.kind} region has no 2d bounds ({CRS.FLAT.value} shapes only)")


def region_ranges(region, params: TwoDParams,
                  max_cells: int = QUERY_MAX_CELLS) -> list[tuple[int, int]]:
    """Hash ranges to scan for a $geoWithin region on a 2d index."""
    return box_ranges(region_box(region), params, max_cells)


def ranges_to_key_ranges(ranges: list[tuple[int, int]]) -> list[tuple[bytes, bytes]]:
    return [(encode_hash(lo), encode_hash(hi)) for lo, hi in ranges]
