"""GEO_NEAR_2DSPHERE and GEO_NEAR_2D: `$near`, `$nearSphere` and `$geoNear` over a geo index.

The search itself is the geo core's (query/geo/near.py): rounds over growing annuli, each an
index scan of the annulus' cell (or geohash) ranges; this stage supplies the scans and the exact
distance of a record (its geo field's closest value, after the rest of the filter, which the
near operand itself always passes). Results come out in increasing distance, so a limit stops
the search after the first rounds.

A spherical search on a 2d index (legacy `$nearSphere`) has no flat annuli to scan: it reads the
whole index, then sorts by spherical distance (a documented difference: mongod scans growing
boxes). Distances are meters for GeoJSON queries, radians for legacy spherical queries, and
coordinate units for flat ones.

`selection(state, query, operand)` picks the index for a near operand (291 without one);
`parse_geo_near_stage` and `geo_near_filter` turn an aggregation's leading `$geoNear` into that
near query.
"""
from __future__ import annotations

import math
import struct
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import islice, repeat
from typing import Any, Optional

import bson
from bson.decimal128 import Decimal128
from bson.int64 import Int64

from ..errors import CommandError, ErrorCode
from ..planner.geo_plans import check_near_placement
from ..planner.key_ranges import prefix_end
from ..query import metadata
from ..query.geo import GeoError, NearQuery, parse_near, parse_stored, predicates, s2, s2keys
from ..query.geo import near as near_search
from ..query.geo.geohash import document_locations, query_point_hash
from ..query.geo.shapes import CRS
from . import layout, record_format
from . import plan_stages as S
from .access.geo2d import TwoDAccess
from .access.geo2dsphere import S2Access
from .access.geo_common import field_values
from .record_ids import IntRecordIds

_FULL_HASH_RANGE = [(0, (1 << 64) - 1)]
_BYTES = [bytes((i,)) for i in range(256)]
# the end of a format-2 entry on an ordinary collection: point vector, flag, record id (u64)
_ENTRY_TAIL = struct.Struct(s2keys.POINT_VECTOR.format + "BQ")
_RID = struct.Struct(">Q")
assert _ENTRY_TAIL.size == s2keys.POINT_VECTOR.size + 1 + layout.RID_WIDTH == 33


@dataclass
class GeoNearOutput:
    """What `$geoNear` adds to each document: its distance (times a multiplier) and the
    location it was measured to."""

    distance_field: Optional[str] = None
    multiplier: float = 1.0
    include_locs: Optional[str] = None


@dataclass
class NearSelection:
    path: str
    query: NearQuery
    access: Any            # S2Access or TwoDAccess
    prefixes: list


def near_operand(filt: Any) -> Optional[tuple[str, Mapping]]:
    """The filter's near operand (path, operator document), or None; mongod's placement errors."""
    return check_near_placement(filt)


def selection(state: Any, filt: Any, operand: tuple[str, Mapping]) -> NearSelection:
    """The geo index answering a near operand on its path (291 when there is none); `filt`
    is the ParsedQuery (fields before the geo field must be bound to points)."""
    path, cond = operand
    query = parse_near(cond)
    candidates = []
    for access in state.indexes:
        if not isinstance(access, (S2Access, TwoDAccess)) or access.geo_field != path:
            continue
        if access.meta.options.get("hidden"):
            continue
        if isinstance(access, TwoDAccess) and query.is_geojson:
            continue   # a GeoJSON point needs a 2dsphere index
        prefix = access.prefix_keys(filt)
        if prefix is None:
            continue
        rank = 0 if isinstance(access, TwoDAccess) == (not query.is_near_sphere and not query.is_geojson) else 1
        candidates.append((rank, access, prefix[0]))
    if not candidates:
        raise CommandError(ErrorCode.NoQueryExecutionPlans,
                           "error processing query: planner returned error :: caused by :: "
                           "unable to find index for $geoNear query")
    candidates.sort(key=lambda c: c[0])
    _, access, prefixes = candidates[0]
    if isinstance(access, TwoDAccess) and not query.spherical("2d"):
        x, y = query.center.flat_point or (0.0, 0.0)
        query_point_hash(x, y, access.params)   # 16433 outside the index
    return NearSelection(path, query, access, prefixes)


class GeoNear(S.Stage):
    """Documents matching the filter, nearest first, with their distances."""

    def __init__(self, state: Any, reader: Any, sel: NearSelection, matcher: Any,
                 filter_spec: Optional[dict], ctx: Any = None,
                 output: Optional[GeoNearOutput] = None, with_metadata: bool = False) -> None:
        super().__init__()
        self.with_metadata = with_metadata
        self.state, self.reader, self.sel = state, reader, sel
        # the near operand matches every document: without other predicates there is nothing to apply
        self.matcher = getattr(matcher, "match", matcher) if filter_spec else None
        self.filter_spec, self.ctx, self.output = filter_spec, ctx, output
        self.is_2d = isinstance(sel.access, TwoDAccess)
        self.name = "GEO_NEAR_2D" if self.is_2d else "GEO_NEAR_2DSPHERE"
        self.scans: list[S.IndexScan] = []
        self.fetched = 0
        self.wanted = 0   # at most this many results are read (skip + limit; 0: unknown)
        # distances measured from the keys (format 2 point suffixes) by record id, while the
        # search may use them (rows sets it up); None: every record is read to be measured
        self._ranked: Optional[dict] = None
        self._center_vector = (0.0, 0.0, 0.0)

    # -- the search ---------------------------------------------------------------------------
    def _scan(self, intervals: list[tuple[int, int]]) -> Iterable[Any]:
        access = self.sel.access
        if self.is_2d:   # a 2dsphere search asks `_held` for its ancestors before it scans
            intervals = self._present(intervals)
        if not intervals:
            return iter(())
        prefixes = self.sel.prefixes
        if self.is_2d or len(prefixes) != 1:
            ranges = access.ranges_with_prefixes(prefixes, intervals)
        else:   # ranges_with_prefixes of one prefix (prefix_end(head + c) is head + the end of c)
            head, encode, end = prefixes[0], s2keys.encode_cell, s2keys.cell_key_end
            ranges = [(head + encode(lo), head + end(hi)) for lo, hi in intervals]
        scan = S.IndexScan(access, self.reader, ranges, lambda: access.explain_intervals(intervals),
                           1, multikey=True, ctx=self.ctx)
        self.scans.append(scan)
        return self._rids(scan) if self._ranked is None else self._ranked_rids(scan)

    def _txn(self) -> Any:
        """The reader's open snapshot (or writer transaction). A round reads through it
        directly, without the reader's chunking: the search never yields in the middle of a
        round (near.py `_rounds`), so no snapshot can be released while a round reads."""
        reader = self.reader
        if reader.txn is None:
            reader.open()
        return reader.txn

    def _keys(self, scan: S.IndexScan) -> list[bytes]:
        """The keys of the scan's ranges, read in one storage call (`keys_in_ranges`: a round's
        dozen short ranges without a scan's set-up each), counted in `scan` for explain."""
        base = self.sel.access.prefix
        end = prefix_end(base)
        keys = self._txn().keys_in_ranges(
            [(base + lo, base + hi if hi is not None else end) for lo, hi in scan.ranges])
        examined = scan.examined
        scan.examined = examined + len(keys)
        if (examined & 1023) + len(keys) > 1023:   # as often as a key-by-key scan would
            S.interrupt_check(self.ctx)
        return keys

    def _rids(self, scan: S.IndexScan) -> Iterator[Any]:
        """The record ids of the scan's entries, counted in `scan` for explain. Not
        de-duplicated: the search skips the records it has seen (near.py `_rounds`). Key by
        key (a 2d spherical search reads the whole index through it)."""
        base = self.sel.access.prefix
        rid_from = self.sel.access.rids.of_entry   # IndexEntries.rid_of_entry, one frame less
        reader_scan, ctx = self._txn().scan, self.ctx
        examined = scan.examined
        try:
            for lo, hi in scan.ranges:
                for key, _ in reader_scan(base + lo, base + hi if hi is not None else prefix_end(base)):
                    examined += 1
                    if not examined & 1023:
                        S.interrupt_check(ctx)
                    yield rid_from(key)
        finally:
            scan.examined = examined

    def _ranked_rids(self, scan: S.IndexScan) -> list:
        """`_rids` of a format-2 index on an ordinary collection: an entry ends with the key's
        point suffix then the 8-byte record id, and the suffix's last byte says whether the
        key holds the document's only point (its unit vector just before that byte). Such a
        record is measured here (s2.vector_angle written out) into `_ranked`, and read only if
        it is returned."""
        ranked = self._ranked
        assert ranked is not None
        cx, cy, cz = self._center_vector
        tail, rid_at, atan2, sqrt = _ENTRY_TAIL.unpack_from, _RID.unpack_from, math.atan2, math.sqrt
        # offsets from the entry's end (struct takes negative offsets as bytes indexing does)
        tail_at, flag_at, rid_width = -_ENTRY_TAIL.size, -1 - _RID.size, -_RID.size
        out: list = []
        append = out.append
        for key in self._keys(scan):
            if key[flag_at] == 1:
                px, py, pz, _, rid = tail(key, tail_at)
                qx, qy, qz = cy * pz - cz * py, cz * px - cx * pz, cx * py - cy * px
                ranked[rid] = atan2(sqrt(qx * qx + qy * qy + qz * qz), cx * px + cy * py + cz * pz)
            else:
                rid = rid_at(key, rid_width)[0]
            append(rid)
        return out

    def _held(self, cells: list[int]) -> list[int]:
        """The cells (signed ids) some entry holds exactly: a covering's ancestors (about half
        of a round's ranges) that only shapes larger than a point store. A point probe
        (`first`) costs far less than setting up a scan, and what a probe found is kept on
        the index handle for later views of the same data version (`S2Access.probed`: any
        commit starts it over)."""
        prefixes = self.sel.prefixes
        access = self.sel.access
        base = access.prefix
        txn = self._txn()
        first = txn.first
        encode = s2keys.encode_cell
        if len(prefixes) != 1:
            return [cell for cell in cells
                    if any(first(base + p + encode(cell), base + prefix_end(p + encode(cell))) is not None
                           for p in prefixes)]
        data_version = getattr(txn, "data_version", None)
        version = data_version() if data_version is not None else None
        known = access.probed(version) if version is not None else None
        head = base + prefixes[0]
        # no fields before the geo field: the cell id alone names what is probed (no key built
        # for a cell probed before; ints and bytes never collide as keys of the table)
        by_cell = known is not None and not prefixes[0]
        held = []
        for cell in cells:
            if by_cell:
                present = known.get(cell)   # type: ignore[union-attr]
                if present is None:
                    present = known[cell] = self._probe(first, head + encode(cell))  # type: ignore[index]
            else:
                key = head + encode(cell)
                present = known.get(key) if known is not None else None
                if present is None:
                    present = self._probe(first, key)
                    if known is not None:
                        known[key] = present
            if present:
                held.append(cell)
        return held

    def _held_ancestors(self, cells: list[int]) -> list[int]:
        """The strict ancestors (signed ids) of a round's covering cells (unsigned) that some
        entry holds exactly (`_held`). Without fields before the geo field, the answer per
        covering cell is kept on the index handle for the data version, as probes are
        (`S2Access.ancestors_held`): nearby searches cover with the same cells, and then
        neither the ancestors are listed nor their probes looked up again."""
        params = self.sel.access.params
        prefixes = self.sel.prefixes
        data_version = getattr(self._txn(), "data_version", None)
        version = data_version() if data_version is not None else None
        if version is None or len(prefixes) != 1 or prefixes[0]:
            ancestors: set[int] = set()
            for cell in cells:
                ancestors.update(s2keys.strict_ancestors(cell, params))
            return self._held(list(ancestors))
        table = self.sel.access.ancestors_held(version)
        known = list(map(table.get, cells))
        if None not in known and not any(known):   # the common answer: none (points only)
            return []
        out: list[int] = []
        for cell in cells:
            held = table.get(cell)
            if held is None:
                held = table[cell] = tuple(self._held(s2keys.strict_ancestors(cell, params)))
            if held:
                out.extend(held)
        return sorted(set(out)) if out else out

    @staticmethod
    def _probe(first: Any, key: bytes) -> bool:
        """Whether an entry starts with `key`."""
        last = key[-1]   # prefix_end(key) without a call when the last byte can grow
        return first(key, key[:-1] + _BYTES[last + 1] if last != 0xFF else prefix_end(key)) is not None

    def _present(self, intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """The intervals less the single values no entry holds (a 2d search's)."""
        prefixes = self.sel.prefixes
        base = self.sel.access.prefix
        first = self._txn().first
        encode = self.sel.access.encode_interval
        kept = []
        for lo, hi in intervals:
            if lo == hi:
                cell = encode(lo, hi)[0]
                if all(first(base + p + cell, base + prefix_end(p + cell)) is None for p in prefixes):
                    continue
            kept.append((lo, hi))
        return kept

    def _sample(self, lo: int, hi: int, n: int) -> list[float]:
        """About the first n cell ids (approximate, ascending) stored in [lo, hi] under the
        first prefix: what sizes the first annulus of a spherical search."""
        access = self.sel.access
        head = access.prefix + self.sel.prefixes[0]
        lo_key, hi_key = access.encode_interval(lo, hi)
        skip = len(head)
        approx = s2keys.approximate_cell
        return [approx(key[skip:skip + 10])
                for key, _ in islice(self.reader.scan(head + lo_key, prefix_end(head + hi_key)), n)]

    def _exists(self, intervals: list[tuple[int, int]]) -> bool:
        """Whether an entry falls in any of the intervals: point probes, no scan (the near
        search's density estimate asks only this)."""
        access, prefixes = self.sel.access, self.sel.prefixes
        base = access.prefix
        first = self.reader.first
        for lo, hi in intervals:
            lo_key, hi_key = access.encode_interval(lo, hi)
            for p in prefixes:
                if first(base + p + lo_key, base + prefix_end(p + hi_key)) is not None:
                    return True
        return False

    def rows(self) -> Iterator[S.Row]:
        q = self.sel.query
        spherical = q.spherical("2d" if self.is_2d else "2dsphere")
        pending: dict[int, tuple] = {}   # read and measured (a record measured from its key is not)
        path = self.sel.path
        if spherical:
            center = q.sphere_center()
            lo, hi = q.to_radians(q.min_distance), q.to_radians(q.max_distance)
        else:
            x, y = q.center.flat_point or (0.0, 0.0)
            lo, hi = q.min_distance, q.max_distance

        top_level = "." not in path
        where_from = center if spherical else (x, y)
        center_vector = (0.0, 0.0, 0.0)
        if spherical:
            lng_lat = q.center.flat_point if q.center.crs == CRS.SPHERE else None
            if lng_lat is not None and -180.0 < lng_lat[0] < 180.0 and -90.0 < lng_lat[1] < 90.0:
                # the center's ToPoint() in plain floats, bit for bit (s2.unit_vector)
                center_vector = s2.unit_vector(*lng_lat)
            else:
                center_vector = s2.vector_of(center)

        plain_points = spherical and top_level and not self.is_2d
        cx, cy, cz = center_vector
        access = self.sel.access
        if (spherical and not self.is_2d and getattr(access, "key_format", 1) >= 2
                and isinstance(access.rids, IntRecordIds)):
            self._ranked = {}
            self._center_vector = center_vector
        ranked = self._ranked
        cos, sin, atan2, sqrt = math.cos, math.sin, math.atan2, math.sqrt
        deg = s2.DEGREE

        def measure(doc: dict) -> tuple[Optional[float], Any]:
            if plain_points:
                # The common stored point {type: "Point", coordinates: [lng, lat]} inside the
                # ranges: s2.unit_vector and s2.vector_angle written out (same operations).
                value = doc.get(path)
                if type(value) is dict and len(value) == 2 and value.get("type") == "Point":
                    coords = value.get("coordinates")
                    if type(coords) is list and len(coords) == 2:
                        lng, lat = coords
                        if ((type(lng) is float or type(lng) is int)
                                and (type(lat) is float or type(lat) is int)
                                and -180.0 < lng < 180.0 and -90.0 < lat < 90.0):
                            phi, theta = lat * deg, lng * deg
                            cos_phi = cos(phi)
                            px, py, pz = cos(theta) * cos_phi, sin(theta) * cos_phi, sin(phi)
                            qx, qy, qz = cy * pz - cz * py, cz * px - cx * pz, cx * py - cy * px
                            return (atan2(sqrt(qx * qx + qy * qy + qz * qz), cx * px + cy * py + cz * pz),
                                    value)
            best: Optional[float] = None
            where = None
            if top_level:   # field_values of a top-level path: the value itself (arrays whole)
                value = doc.get(path)
                values = [value] if value is not None or path in doc else []
            else:
                values = field_values(doc, path)
            for value in values:
                for loc in (document_locations(value) if self.is_2d else [value]):
                    d = _distance(loc, spherical, where_from, center_vector)
                    if d is not None and (best is None or d < best):
                        best, where = d, loc
            return best, where

        get, record_key, matcher = self.reader.get, self.state.record_key, self.matcher
        stored_document, decode, decode_all = record_format.document, bson.decode, bson.decode_all

        def distance(rid: Any) -> Optional[float]:
            # each record is measured once: the search keeps what it read (near.py `_rounds`)
            value = get(record_key(rid))
            d = None
            if value is not None:
                raw = stored_document(value)
                self.fetched += 1
                doc = decode(raw)
                if matcher is None or matcher(doc):
                    d, where = measure(doc)
                    if d is not None:
                        pending[rid] = (raw, doc, where)
            return d

        def distances(rids: list) -> list[Optional[float]]:
            """`distance` of a round's new records: those measured from their keys as they
            are, the others fetched, then decoded in one call."""
            from_keys: list = []
            unread = rids
            if ranked is not None:
                from_keys = list(map(ranked.pop, rids, repeat(None)))
                if None not in from_keys:
                    return from_keys
                unread = [rid for rid, d in zip(rids, from_keys) if d is None]
            found, raws = [], []
            get = self._txn().get
            for rid in unread:
                value = get(record_key(rid))
                if value is not None:
                    found.append(rid)
                    raws.append(stored_document(value))
            self.fetched += len(found)
            by_rid: dict = {}
            if found:
                for rid, raw, doc in zip(found, raws, decode_all(b"".join(raws))):
                    if matcher is not None and not matcher(doc):
                        continue
                    d, where = measure(doc)
                    if d is not None:
                        pending[rid] = (raw, doc, where)
                        by_rid[rid] = d
            if ranked is None:
                return [by_rid.get(rid) for rid in rids]
            return [by_rid.get(rid) if d is None else d for rid, d in zip(rids, from_keys)]

        if self.is_2d and spherical:
            found = near_search.near_brute_force(
                ((rid, distance(rid)) for rid in self._scan(_FULL_HASH_RANGE)), lo, hi)
            rounds: Any = [found] if found else []
        elif self.is_2d:
            rounds = ([pair] for pair in near_search.near_2d(
                x, y, self._scan, distance, self.sel.access.params, lo, hi, self.wanted, self._exists))
        else:
            rounds = near_search.near_2dsphere(center, self._scan, distance,
                                               self.sel.access.params, lo, hi, self.wanted,
                                               self._exists, self._sample,
                                               self.sel.access.near_hints, center_vector,
                                               distances, self._held_ancestors, by_round=True)
        report = spherical and q.is_geojson
        with_metadata = self.with_metadata
        wants_where = self.output is not None or with_metadata
        wanted = self.wanted
        ahead: dict = {}   # records ranked by their keys, read together before they are returned
        for found in rounds:
            if ranked is not None and wanted > self.n_returned:
                unread = [rid for _, rid in islice(found, wanted - self.n_returned)
                          if rid not in pending]
                if unread:
                    self._read_ahead(unread, ahead)
            for d, rid in found:
                entry = pending.pop(rid, None)
                if entry is None:   # ranked by its key: read now, and the rest of the filter applied
                    read = ahead.pop(rid, None)
                    if read is None:
                        value = get(record_key(rid))
                        if value is None:
                            continue
                        raw = stored_document(value)
                        self.fetched += 1
                        doc = decode(raw)
                    else:
                        raw, doc = read
                    if matcher is not None and not matcher(doc):
                        continue
                    where = measure(doc)[1] if wants_where else None
                else:
                    raw, doc, where = entry
                self.n_returned += 1
                if self.output is not None or with_metadata:
                    shown = d * s2.EARTH_RADIUS_METERS if report else d
                    if with_metadata:  # query/metadata.py: {$meta: "geoNearDistance"}, "geoNearPoint"
                        doc[metadata.GEO_NEAR_DISTANCE_FIELD] = shown
                        doc[metadata.GEO_NEAR_POINT_FIELD] = where
                    yield rid, None, self._annotated(doc, shown, where)
                else:
                    yield rid, raw, doc

    def _read_ahead(self, rids: list, into: dict) -> None:
        """The records of `rids` (the next ones a round returns), read and decoded together
        into `into` (rid -> (raw, document)); a missing one is left out."""
        values = self._txn().get_many(list(map(self.state.record_key, rids)))
        if None in values:
            rids = [rid for rid, v in zip(rids, values) if v is not None]
            values = [v for v in values if v is not None]
            if not values:
                return
        self.fetched += len(values)
        raws = list(map(record_format.document, values))
        into.update(zip(rids, zip(raws, bson.decode_all(b"".join(raws)))))

    def _annotated(self, doc: dict, distance: float, where: Any) -> dict:
        out = self.output
        if out is None:
            return doc
        if out.distance_field is not None:
            _set_path(doc, out.distance_field, distance * out.multiplier)
        if out.include_locs is not None:
            _set_path(doc, out.include_locs, where)
        return doc

    # -- explain ------------------------------------------------------------------------------
    def describe(self) -> dict:
        meta = self.sel.access.meta
        out: dict[str, Any] = {"keyPattern": dict(meta.key), "indexName": meta.name,
                               "indexVersion": 2}
        if self.filter_spec:
            out["filter"] = self.filter_spec
        return out

    def stat_fields(self) -> dict:
        return {"keysExamined": self.keys_examined(), "docsExamined": self.fetched}

    def child_explain(self, stats: bool) -> Optional[dict]:
        if not stats:
            return None
        return {"inputStages": [{"stage": "FETCH", "inputStage": s.explain(True)}
                                for s in self.scans]}

    def keys_examined(self) -> int:
        return sum(s.examined for s in self.scans)

    def docs_examined(self) -> int:
        return self.fetched


def _plain_point(value: Any) -> Optional[tuple[float, float]]:
    """(x, y) of the common stored points, `{type: "Point", coordinates: [x, y]}` and `[x, y]`,
    when plainly valid (None: let the parser decide)."""
    if type(value) is dict and len(value) == 2 and value.get("type") == "Point":
        value = value.get("coordinates")
        if type(value) is list and len(value) == 2:
            x, y = value
            if type(x) in (int, float) and type(y) in (int, float) and -180 <= x <= 180 and -90 <= y <= 90:
                return float(x), float(y)
        return None
    if type(value) is list and len(value) == 2:
        x, y = value
        if type(x) in (int, float) and type(y) in (int, float) and math.isfinite(x) and math.isfinite(y):
            return float(x), float(y)
    return None


def _distance(value: Any, spherical: bool, center: Any,
              center_vector: tuple = (0.0, 0.0, 0.0)) -> Optional[float]:
    """Distance from the query center to one stored location (None: not a usable geometry);
    `center_vector` is the spherical center's coordinates (s2.vector_of)."""
    if not isinstance(value, (dict, list, tuple)) and not hasattr(value, "items"):
        return None
    plain = _plain_point(value)
    if plain is not None:
        if not spherical:
            return math.hypot(plain[0] - center[0], plain[1] - center[1])
        lng, lat = plain
        if -180.0 < lng < 180.0 and -90.0 < lat < 90.0:   # Normalized() would change nothing
            return s2.vector_angle(center_vector, s2.unit_vector(lng, lat))
        if -180 <= lng <= 180 and -90 <= lat <= 90:
            return s2.angle_to(center, lng, lat)
    try:
        geometry = parse_stored("", value, skip_validation=True)
    except GeoError:
        return None
    if spherical:
        if not geometry.can_project(CRS.SPHERE):
            return None
        return predicates.sphere_distance(center, geometry.projected(CRS.SPHERE))
    if not geometry.can_project(CRS.FLAT):
        return None
    return predicates.flat_distance(center[0], center[1], geometry.projected(CRS.FLAT))


def _set_path(doc: dict, path: str, value: Any) -> None:
    parts = path.split(".")
    cur = doc
    for part in parts[:-1]:
        nxt = cur.get(part)
        if not isinstance(nxt, dict):
            nxt = {}
            cur[part] = nxt
        cur = nxt
    cur[parts[-1]] = value


__all__ = ["GeoNear", "GeoNearOutput", "NearSelection", "near_operand", "selection"]


# --- the $geoNear aggregation stage ---------------------------------------------------------

@dataclass
class GeoNearStage(GeoNearOutput):
    """A parsed `$geoNear` stage: the near query it runs and what it adds to each result."""

    near: Any = None
    spherical: bool = False
    min_distance: Any = None
    max_distance: Any = None
    query: Optional[dict] = None
    key: Optional[str] = None


def _number(value: Any) -> bool:
    return isinstance(value, (int, float, Int64, Decimal128)) and not isinstance(value, bool)


def parse_geo_near_stage(spec: Any) -> GeoNearStage:
    """`{$geoNear: {...}}`'s options, checked as DocumentSourceGeoNear::parseOptions does."""
    if not isinstance(spec, Mapping):
        raise CommandError(ErrorCode.FailedToParse,
                           "$geoNear only supports an object as its argument")
    out = GeoNearStage()
    for name, value in spec.items():
        if name == "near":
            if not isinstance(value, (Mapping, list)):
                raise CommandError(ErrorCode.TypeMismatch, "$geoNear requires near argument to be "
                                   "a GeoJSON object or a legacy point(array) instead of "
                                   f"{type_name(value)}")
            out.near = value
        elif name == "distanceField":
            if not isinstance(value, str):
                raise CommandError(ErrorCode.TypeMismatch, "distanceField must be of type string "
                                   f"but found {type_name(value)}")
            _check_path(value, "distanceField")
            out.distance_field = value
        elif name == "includeLocs":
            if not isinstance(value, str):
                raise CommandError(ErrorCode.TypeMismatch, "includeLocs must be of type string "
                                   f"but found {type_name(value)}")
            _check_path(value, "includeLocs")
            out.include_locs = value
        elif name == "distanceMultiplier":
            if not _number(value):
                raise CommandError(ErrorCode.TypeMismatch, "distanceMultiplier must be a number, "
                                   f"instead got type {type_name(value)}")
            out.multiplier = float(str(value)) if isinstance(value, Decimal128) else float(value)
            if out.multiplier < 0:
                raise CommandError(ErrorCode.BadValue, "distanceMultiplier must be nonnegative")
        elif name in ("minDistance", "maxDistance"):
            if not _number(value):
                raise CommandError(ErrorCode.TypeMismatch, f"{name} must be a number, instead got "
                                   f"type {type_name(value)}")
            if name == "minDistance":
                out.min_distance = value
            else:
                out.max_distance = value
        elif name == "query":
            if not isinstance(value, Mapping):
                raise CommandError(ErrorCode.TypeMismatch, "query must be an object, instead got "
                                   f"type {type_name(value)}")
            out.query = dict(value)
        elif name == "spherical":
            out.spherical = bool(value) if not _number(value) else value != 0
        elif name == "key":
            if not isinstance(value, str):
                raise CommandError(ErrorCode.TypeMismatch, "$geoNear parameter 'key' must be of "
                                   f"type string but found {type_name(value)}")
            if not value:
                raise CommandError(ErrorCode.BadValue,
                                   "$geoNear parameter 'key' cannot be the empty string")
            out.key = value
        elif name in ("num", "limit"):
            raise CommandError(ErrorCode.BadValue, f"$geoNear no longer supports the '{name}' parameter. Use a "
                               "$limit stage instead.")
        elif name == "uniqueDocs":
            continue   # deprecated; mongod ignores it too
        else:
            raise CommandError(ErrorCode.BadValue, f"Unknown argument to $geoNear: {name}")
    if out.near is None:
        raise CommandError(ErrorCode.BadValue, "$geoNear requires a 'near' option as an Array")
    if out.distance_field is None:
        raise CommandError(ErrorCode.GeoNearDistanceFieldMissing,
                           "$geoNear requires a 'distanceField' option as a String")
    return out


def _check_path(path: str, what: str) -> None:
    """`distanceField`/`includeLocs` are field paths (no leading `$`)."""
    if path.startswith("$"):
        raise CommandError(ErrorCode.FieldPathDollarPrefixed, "FieldPath field names may not "
                           "start with '$'. Consider using $getField or $setField.")


def type_name(value: Any) -> str:
    from ..bsonutil.types import type_name as name_of
    return name_of(value)


def geo_near_key(state: Any, stage: GeoNearStage) -> str:
    """The geo field `$geoNear` searches: `key`, else the collection's only 2d (or else only
    2dsphere) index (mongod's rule; IndexNotFound otherwise)."""
    if stage.key is not None:
        return stage.key
    ns = state.meta.ns
    for kind in (TwoDAccess, S2Access):
        found = [a for a in state.indexes if isinstance(a, kind)]
        if len(found) > 1:
            raise CommandError(ErrorCode.IndexNotFound, f"There is more than one {found[0].kind} "
                               f"index on {ns}; unsure which to use for $geoNear")
        if found:
            return found[0].geo_field
    raise CommandError(ErrorCode.IndexNotFound,
                       "$geoNear requires a 2d or 2dsphere index, but none were found")


def geo_near_filter(state: Any, stage: GeoNearStage) -> dict:
    """The find filter a `$geoNear` runs: its `query` plus the near operand on its key."""
    key = geo_near_key(state, stage)
    operand: dict = {"$nearSphere" if stage.spherical else "$near": stage.near}
    if stage.min_distance is not None:
        operand["$minDistance"] = stage.min_distance
    if stage.max_distance is not None:
        operand["$maxDistance"] = stage.max_distance
    filt = dict(stage.query or {})
    if key in filt:
        filt = {"$and": [filt, {key: operand}]}
    else:
        filt[key] = operand
    return filt
