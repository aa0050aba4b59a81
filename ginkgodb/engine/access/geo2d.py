"""The 2d access method (legacy coordinate pairs on a flat plane): geohashes as index keys.

Keys and query ranges are the geo core's (query/geo/geohash.py; the format is in
docs/design/geo-index.md). The 2d field must come first (mongod's rule); other fields follow
as B-tree components. A document without a location object gets no entry; a malformed pair
fails the write (13026, 13027, 13067, 13068, 13654) before anything is written.
"""
from __future__ import annotations

from typing import Any, Optional

from ...errors import CommandError, ErrorCode
from ...planner.geo_plans import GeoPlanning
from ...query.geo import GeoPredicate, geohash, twod_params_from_spec
from ...query.geo.shapes import CRS
from .geo_common import GeoAccess, field_values


class TwoDAccess(GeoAccess, GeoPlanning):
    kind = "2d"
    geo_kind = "2d"

    def __init__(self, meta: Any, ns: str) -> None:
        super().__init__(meta, ns)
        self.params = twod_params_from_spec(meta.options)

    def geo_components(self, doc: dict) -> list[bytes]:
        hashes: set[int] = set()
        for value in field_values(doc, self.geo_field):
            hashes.update(geohash.index_hashes(value, doc, self.params))
        return [geohash.encode_hash(h) for h in sorted(hashes)]

    # -- planning -----------------------------------------------------------------------------
    def ranges_for_region(self, predicate: GeoPredicate) -> Optional[list[tuple[int, int]]]:
        region = predicate.region
        if predicate.predicate != "within":
            return None   # $geoIntersects needs a 2dsphere index
        if region.crs != CRS.FLAT and region.cap is None:
            return None   # GeoJSON regions: answered by a scan (or a 2dsphere index)
        return geohash.region_ranges(region, self.params)

    def encode_interval(self, lo: int, hi: int) -> tuple[bytes, bytes]:
        return geohash.encode_hash(lo), geohash.encode_hash(hi)

    def explain_intervals(self, intervals: list[tuple[int, int]]) -> list[str]:
        return [f"[BinData(128, {lo:016X}), BinData(128, {hi:016X})]" for lo, hi in intervals]

    @staticmethod
    def check_spec(key: dict, options: dict) -> None:
        fields = list(key)
        kinds = [d for d in key.values() if isinstance(d, str)]
        if kinds.count("2d") > 1 or any(k != "2d" for k in kinds):
            raise CommandError(ErrorCode.CannotCreateIndex,
                               "Can't use more than one index plugin for a single index.")
        if key[fields[0]] != "2d":
            raise CommandError(ErrorCode.TwoDIndexNotFirst, "2d has to be first in index")
        if options.get("unique"):
            raise CommandError(ErrorCode.CannotCreateIndex,
                               "Index type '2d' does not support the unique option")
        twod_params_from_spec(options)
