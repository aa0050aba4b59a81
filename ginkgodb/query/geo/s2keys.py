"""2dsphere (version 3) index keys and scan ranges, as mongod's S2 access method builds them.

A document's geometry becomes S2 cells: a point is its leaf cell (level 30); any other shape
is an S2RegionCoverer covering between `coarsestIndexedLevel` and `finestIndexedLevel` with at
most `maxCellsInCovering` cells (advisory). Each cell is one key: the cell id as a signed 64-bit
integer (NumberLong), which is what mongod stores, encoded by `bsonutil.keycodec` like any
number (see docs/design/geo-index.md, "2dsphere key format": persisted, versioned). Key
format 2 ends every key with the point suffix (`point_suffix`), which lets a near search rank a
plain point from its key alone.

A query region becomes ranges of those integers: its own covering (levels 0..23, at most 20
cells) as [range_min, range_max] ranges, plus every strict ancestor of its cells down to the
coarsest indexed level as single values (mongod's S2CellIdsToIntervalsWithParents). Any
indexed cell that meets a covering cell is either inside one of the ranges or is one of those
ancestors, so a scan of the ranges returns a superset of the matches; the exact predicate
filters it.
"""
from __future__ import annotations

import bisect
import functools
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bson.binary import Binary
from bson.int64 import Int64

from ...bsonutil import keycodec
from ...errors import CommandError, ErrorCode
from . import s2
from .codes import GeoCode
from .geojson import GeoError, parse_stored, show, show_document
from .shapes import CRS, Geometry

KEY_FORMAT_VERSION = 2        # of the bytes described in docs/design/geo-index.md
KEY_FORMATS = (1, 2)          # read and written (an index keeps the format it was built with)
#: the catalog entry's record of an index's key format (not shown by listIndexes; absent: 1)
FORMAT_OPTION = "s2KeyFormat"
SUPPORTED_VERSIONS = (1, 2, 3)
DEFAULT_INDEX_VERSION = 3

# Query coverings (mongod's internalQueryS2GeoCoarsestLevel/FinestLevel/MaxCells defaults).
QUERY_COARSEST_LEVEL = 0
QUERY_FINEST_LEVEL = 23
QUERY_MAX_CELLS = 20


@dataclass(frozen=True)
class S2IndexParams:
    """The covering parameters of one 2dsphere index (mongod's S2IndexingParams)."""

    index_version: int = DEFAULT_INDEX_VERSION
    finest_level: int = s2.closest_level(110.0 / s2.EARTH_RADIUS_METERS)            # 16
    coarsest_level: int = s2.closest_level(2000 * 1000.0 / s2.EARTH_RADIUS_METERS)  # 2
    max_cells: int = 20


def _int_option(spec: Mapping, name: str, default: int) -> int:
    if name not in spec:
        return default
    value = spec[name]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CommandError(ErrorCode.TypeMismatch,
                           f"\"{name}\" had the wrong type. Expected number, found "
                           f"{type(value).__name__}")
    if isinstance(value, float) and value != int(value):
        raise CommandError(ErrorCode.BadValue, f"Expected an integer: {name}: {show(value)}")
    return int(value)


def params_from_spec(spec: Mapping) -> S2IndexParams:
    """Covering parameters from an index specification, checked as mongod checks them.

    An index without `2dsphereIndexVersion` is version 1 (mongod's rule for stored indexes;
    createIndexes adds version 3 to new ones). Only version 3 keys are built here.
    """
    version = _int_option(spec, "2dsphereIndexVersion", 1)
    if version not in SUPPORTED_VERSIONS:
        raise CommandError(GeoCode.UNSUPPORTED_INDEX_VERSION,
                           f"unsupported geo index version {{ 2dsphereIndexVersion : {version} }}"
                           f", only support versions: [1,2,3]")
    if version != 3:
        raise CommandError(ErrorCode.NotImplemented,
                           f"2dsphereIndexVersion {version} indexes are not supported; use 3")
    base = S2IndexParams()
    params = S2IndexParams(
        index_version=version,
        finest_level=_int_option(spec, "finestIndexedLevel", base.finest_level),
        coarsest_level=_int_option(spec, "coarsestIndexedLevel", base.coarsest_level),
        max_cells=_int_option(spec, "maxCellsInCovering", base.max_cells))
    if params.coarsest_level < 0:
        raise CommandError(GeoCode.COARSEST_LEVEL_MIN, "coarsestIndexedLevel must be >= 0")
    if params.finest_level > 30:
        raise CommandError(GeoCode.FINEST_LEVEL_MAX, "finestIndexedLevel must be <= 30")
    if params.finest_level < params.coarsest_level:
        raise CommandError(GeoCode.FINEST_BELOW_COARSEST,
                           "finestIndexedLevel must be >= coarsestIndexedLevel")
    return params


def _coverer(min_level: int, max_level: int, max_cells: int):
    coverer = s2.S2.S2RegionCoverer()
    coverer.set_min_level(min_level)
    coverer.set_max_level(max_level)
    coverer.set_max_cells(max_cells)
    return coverer


def cover(regions: list, min_level: int, max_level: int, max_cells: int) -> list[int]:
    """Unsigned cell ids covering the union of S2 regions (S2RegionCoverer on S2RegionUnion).

    The bindings have no S2RegionUnion: several regions are covered one by one, and when the
    union holds more than `max_cells` cells it is covered once more as an S2CellUnion.
    """
    coverer = _coverer(min_level, max_level, max_cells)
    if len(regions) == 1:
        return sorted(c.id() for c in coverer.GetCovering(regions[0]))
    ids: set[int] = set()
    for region in regions:
        ids.update(c.id() for c in coverer.GetCovering(region))
    if len(ids) > max_cells:
        union = s2.S2.S2CellUnion([s2.S2.S2CellId(i) for i in ids])
        ids = {c.id() for c in coverer.GetCovering(union)}
    return sorted(ids)


def document_cells(geometry: Geometry, params: S2IndexParams) -> list[int]:
    """The unsigned cell ids a 2dsphere (v3) index stores for a (spherical) geometry."""
    if geometry.is_point:
        return [s2.S2.S2CellId(geometry.points[0]).id()]
    return cover(geometry.s2_regions(), params.coarsest_level, params.finest_level,
                 params.max_cells)


def _extract_error(document: Mapping, reason: str) -> CommandError:
    return CommandError(GeoCode.CANT_EXTRACT_GEO_KEYS,
                        f"Can't extract geo keys: {show_document(document)}  {reason}")


def is_indexed_value(value: Any) -> bool:
    """2dsphere indexes (v2+) are sparse: missing, null and [] values get no key."""
    return value is not None and not (isinstance(value, (list, tuple)) and not value)


def geometry_for_index(field: str, value: Any, document: Mapping) -> Geometry:
    """The spherical geometry of a field value, or mongod's 16755 error for the document."""
    try:
        geometry = parse_stored(field, value)
    except GeoError as exc:
        raise _extract_error(document, exc.reason) from None
    if not geometry.can_project(CRS.SPHERE):
        raise _extract_error(document,
                             f"can't project geometry into spherical CRS: {show(value)}")
    return geometry.projected(CRS.SPHERE)


def index_cells(field: str, value: Any, document: Mapping, params: S2IndexParams) -> list[int]:
    """Signed cell ids (the stored NumberLongs) for one geo field value; [] when not indexed."""
    if not is_indexed_value(value):
        return []
    geometry = geometry_for_index(field, value, document)
    cells = document_cells(geometry, params)
    if not cells:
        raise CommandError(GeoCode.NO_GEO_KEYS, "Unable to generate keys for (likely malformed) "
                           f"geometry: {show_document(document)}")
    return [s2.to_signed(c) for c in cells]


def index_key_values(field: str, value: Any, document: Mapping,
                     params: S2IndexParams) -> list[Int64]:
    """The key values (NumberLong) of one geo field, to go through keycodec like any number."""
    return [Int64(c) for c in index_cells(field, value, document, params)]


@functools.lru_cache(maxsize=1 << 16)
def encode_cell(signed_cell: int) -> bytes:
    """One 2dsphere key component: keycodec's encoding of the NumberLong cell id (remembered:
    queries keep scanning the same coarse ancestors)."""
    if signed_cell == 0 or not -_I64 <= signed_cell < _I64:
        return keycodec.encode_value(Int64(signed_cell))
    return _encode_int64(signed_cell)


@functools.lru_cache(maxsize=1 << 16)
def cell_key_end(signed_cell: int) -> bytes:
    """The least byte string above every key component that starts with `encode_cell(cell)`
    (prefix_end of it: the exclusive end of a scan through that cell id; remembered too)."""
    p = bytearray(encode_cell(signed_cell))
    while p[-1] == 0xFF:   # never all 0xFF: a component starts with its type bracket
        p.pop()
    p[-1] += 1
    return bytes(p)


_I64 = 1 << 63
_U64 = 1 << 64
_U64_MASK = (1 << 64) - 1
_PACK_D = struct.Struct(">d").pack
_PACK_Q = struct.Struct(">Q").pack
_UNPACK_Q = struct.Struct(">Q").unpack
_UNPACK_D = struct.Struct(">d").unpack
_DIGITS = bytes.maketrans(b"0123456789", bytes(range(1, 11)))
_INVERT = bytes(255 - i for i in range(256))


def _encode_int64(v: int) -> bytes:
    """keycodec's bytes of a non-zero NumberLong with integer arithmetic (keycodec computes the
    remainder with decimals): the nearest double, ordered, then the exact remainder as a
    decimal magnitude. tests/unit/query/geo/test_near_speed.py checks it against keycodec."""
    d = float(v)   # correctly rounded, as keycodec's float(Decimal(v))
    u = _UNPACK_Q(_PACK_D(d))[0]
    head = b"\x14\x04" + _PACK_Q(u ^ _U64_MASK if u & _I64 else u ^ _I64)
    rem = v - int(d)
    if rem == 0:
        return head + b"\x02"
    if rem > 0:
        return head + b"\x03" + _magnitude(rem)
    return head + b"\x01" + _magnitude(-rem).translate(_INVERT)


def approximate_cell(component: bytes) -> float:
    """The cell id an encoded key component holds, to within a double's precision (its first
    ten bytes: bracket, tag, ordered double bits), without decoding the remainder."""
    u = _UNPACK_Q(component[2:10])[0]
    return _UNPACK_D(_PACK_Q(u ^ _I64 if u & _I64 else u ^ _U64_MASK))[0]


def _magnitude(m: int) -> bytes:
    """keycodec's magnitude of a positive integer m = 0.d1..dn x 10^len: the biased exponent,
    the digits (trailing zeros dropped) plus one, 0x00."""
    text = str(m)
    return ((len(text) + 0x8000).to_bytes(2, "big") + text.rstrip("0").encode().translate(_DIGITS)
            + b"\x00")


# --- query side -----------------------------------------------------------------------------

Interval = tuple[int, int]   # inclusive [start, end] of signed cell ids


def cells_to_intervals(cover_ids: list[int], params: S2IndexParams) -> list[Interval]:
    """Ranges of signed cell ids to scan for a query covering (with its ancestors).

    Cell-id arithmetic, as S2CellId does it (a level-k cell's lowest set bit is
    `1 << 2*(30-k)`; its descendants span id -/+ (lsb - 1); its parent at level j keeps the
    bits above `1 << 2*(30-j)` and sets that one): the same values as S2's own calls, several
    times faster than a bindings call per ancestor.
    """
    intervals, ancestors = descendants_and_ancestors(cover_ids, params)
    intervals.extend((a, a) for a in ancestors)
    intervals.sort()
    return intervals


def descendants_and_ancestors(cover_ids: list[int], params: S2IndexParams) -> tuple[list[Interval], list[int]]:
    """`cells_to_intervals` in two parts: the cells' descendant ranges (in the cells' order)
    and their strict ancestors down to the coarsest indexed level (signed, unordered)."""
    coarsest_lsb = 1 << (2 * (30 - params.coarsest_level))
    ancestors: set[int] = set()
    intervals: list[Interval] = []
    append, add = intervals.append, ancestors.add
    # s2.to_signed written out (ids at or above 2^63 are negative longs)
    for cid in cover_ids:
        lsb = cid & -cid
        lo, hi = cid - lsb + 1, cid + lsb - 1
        append((lo - _U64 if lo >= _I64 else lo, hi - _U64 if hi >= _I64 else hi))
        parent_lsb = lsb << 2
        while parent_lsb <= coarsest_lsb:
            parent = (cid & -parent_lsb) | parent_lsb
            if parent in ancestors:
                break   # and so are all of its own ancestors
            add(parent)
            parent_lsb <<= 2
    return intervals, [a - _U64 if a >= _I64 else a for a in ancestors]


def descendant_spans(cover_ids: list[int]) -> list[Interval]:
    """The cells' descendant ranges (signed, in the cells' order): `descendants_and_ancestors`
    without the ancestors."""
    return list(map(descendant_span, cover_ids))


@functools.lru_cache(maxsize=1 << 16)
def descendant_span(cid: int) -> Interval:
    """One cell's descendant range, signed (remembered: nearby searches cover with the same
    cells)."""
    lsb = cid & -cid
    lo, hi = cid - lsb + 1, cid + lsb - 1
    return (lo - _U64 if lo >= _I64 else lo, hi - _U64 if hi >= _I64 else hi)


def strict_ancestors(cell_id: int, params: S2IndexParams) -> list[int]:
    """A cell's strict ancestors (signed ids) down to the coarsest indexed level."""
    coarsest_lsb = 1 << (2 * (30 - params.coarsest_level))
    out = []
    parent_lsb = (cell_id & -cell_id) << 2
    while parent_lsb <= coarsest_lsb:
        parent = (cell_id & -parent_lsb) | parent_lsb
        out.append(parent - _U64 if parent >= _I64 else parent)
        parent_lsb <<= 2
    return out


def merge_intervals(intervals: list[Interval]) -> list[Interval]:
    out: list[Interval] = []
    for lo, hi in intervals:
        if out and lo <= out[-1][1] + 1:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return out


def query_cover(region: Geometry) -> list[int]:
    """The covering mongod computes for a query region (levels 0..23, 20 cells)."""
    return cover(region.s2_regions(), QUERY_COARSEST_LEVEL, QUERY_FINEST_LEVEL, QUERY_MAX_CELLS)


def region_intervals(region: Geometry, params: S2IndexParams) -> list[Interval]:
    """Signed cell-id ranges whose scan returns every document the region may match."""
    if region.crs == CRS.FLAT:
        raise ValueError("a flat region ($box, $polygon, $center) has no 2dsphere bounds")
    return cells_to_intervals(query_cover(region), params)


def intervals_to_key_ranges(intervals: list[Interval]) -> list[tuple[bytes, bytes]]:
    """Inclusive byte ranges of key components for the index scan."""
    return [(encode_cell(lo), encode_cell(hi)) for lo, hi in intervals]


def interval_contains(intervals: list[Interval], signed_cell: int) -> bool:
    """Is a signed cell id inside one of the sorted, disjoint intervals?"""
    i = bisect.bisect_right(intervals, (signed_cell, float("inf"))) - 1
    return i >= 0 and intervals[i][0] <= signed_cell <= intervals[i][1]


# --- the point suffix of key format 2 --------------------------------------------------------
# Every format-2 key ends with one more keycodec component, a BinData of subtype 128: 25 bytes
# (the unit vector x, y, z of the document's only location as big-endian doubles, then 0x01)
# when the document's geo field is one plain point, else the single byte 0x00. The last byte
# of a key says which, so a near search ranks a point by its key alone.
POINT_FLAG, NO_POINT_FLAG = 1, 0
POINT_VECTOR = struct.Struct(">3d")
POINT_SUFFIX_SIZE = 6 + POINT_VECTOR.size + 1   # bracket, length, subtype, vector, flag
NO_POINT_SUFFIX = keycodec.encode_value(Binary(bytes((NO_POINT_FLAG,)), 128))
_POINT_HEAD = keycodec.encode_value(Binary(bytes(POINT_VECTOR.size + 1), 128))[:-(POINT_VECTOR.size + 1)]
_POINT_TAIL = bytes((POINT_FLAG,))


def point_suffix(vector: tuple[float, float, float] | None) -> bytes:
    """The last component of a format-2 key: the point's unit vector, or "no single point"."""
    if vector is None:
        return NO_POINT_SUFFIX
    return _POINT_HEAD + POINT_VECTOR.pack(*vector) + _POINT_TAIL


def single_point_vector(values: list) -> tuple[float, float, float] | None:
    """The unit vector of a geo field holding exactly one plain point strictly inside the
    longitude/latitude ranges (`{type: "Point", coordinates: [lng, lat]}` with no other member,
    or a legacy `[lng, lat]` list of ints and floats), computed as the near stage measures such
    a point (s2.unit_vector); None for anything else (the near stage reads the document)."""
    if len(values) != 1:
        return None
    value = values[0]
    if type(value) is dict:
        if len(value) != 2 or value.get("type") != "Point":
            return None
        value = value.get("coordinates")
    if type(value) is not list or len(value) != 2:
        return None
    lng, lat = value
    if ((type(lng) is float or type(lng) is int) and (type(lat) is float or type(lat) is int)
            and -180.0 < lng < 180.0 and -90.0 < lat < 90.0):
        return s2.unit_vector(lng, lat)
    return None
