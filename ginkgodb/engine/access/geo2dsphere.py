"""The 2dsphere access method (2dsphereIndexVersion 3): S2 cell ids as index keys.

Keys, coverings and query ranges are the geo core's (query/geo/s2keys.py; the format is in
docs/design/geo-index.md). A document whose geo field is missing, null or `[]` gets no entry
(version 3 indexes are sparse on their geo field); an invalid geometry fails the write with
16755 before anything is written (keys are computed before the record is stored).
"""
from __future__ import annotations

from typing import Any, Optional

from ...errors import CommandError, ErrorCode
from ...planner.geo_plans import GeoPlanning
from ...query.geo import GeoPredicate, s2_params_from_spec, s2keys
from ...query.geo.near import DensityHints
from ...query.geo.shapes import CRS
from .geo_common import GeoAccess, field_values

_MAX_PROBED = 50_000


class S2Access(GeoAccess, GeoPlanning):
    kind = "2dsphere"
    geo_kind = "2dsphere"

    def __init__(self, meta: Any, ns: str) -> None:
        super().__init__(meta, ns)
        self.params = s2_params_from_spec(meta.options)
        # key format 2 ends every key with the point suffix (s2keys.point_suffix); an index built
        # in format 1 keeps it (read and written as before, its near searches read documents)
        self.key_format = meta.options.get(s2keys.FORMAT_OPTION, 1)
        if self.key_format not in s2keys.KEY_FORMATS:
            raise CommandError(ErrorCode.NotImplemented,
                               f"2dsphere index {meta.name} uses key format {self.key_format}; rebuild it")
        # densities sampled by earlier near searches (a sizing hint only: query/geo/near.py)
        self.near_hints = DensityHints()
        # near searches' ancestor probes (probe key -> an entry exists) for one data version
        self._probed: tuple[Optional[int], dict] = (None, {})
        # and per covering cell, its ancestors those probes found (near.py `HeldAncestors`)
        self._ancestors_held: tuple[Optional[int], dict] = (None, {})

    def geo_components(self, doc: dict) -> list[bytes]:
        cells: set[int] = set()
        for value in field_values(doc, self.geo_field):
            cells.update(s2keys.index_cells(self.geo_field, value, doc, self.params))
        return [s2keys.encode_cell(c) for c in sorted(cells)]

    def probed(self, version: int) -> dict:
        """The probe results kept for views of data version `version` (storage
        `Snapshot.data_version`): the same version reads the same entries, so they hold until
        the next commit. Bounded; a thread still filling an older version's table fills a
        table no later search reads."""
        held, table = self._probed
        if held != version or len(table) > _MAX_PROBED:
            table = {}
            self._probed = (version, table)
        return table

    def ancestors_held(self, version: int) -> dict:
        """Covering cell (unsigned id) -> its strict ancestors some entry holds, for views of
        data version `version` (as `probed`)."""
        held, table = self._ancestors_held
        if held != version or len(table) > _MAX_PROBED:
            table = {}
            self._ancestors_held = (version, table)
        return table

    def document_keys(self, doc: dict) -> tuple[list[bytes], set]:
        keys, multikey = super().document_keys(doc)
        if not keys or self.key_format == 1:
            return keys, multikey
        # the same suffix on every key keeps them sorted
        suffix = s2keys.point_suffix(s2keys.single_point_vector(field_values(doc, self.geo_field)))
        return [key + suffix for key in keys], multikey

    # -- planning -----------------------------------------------------------------------------
    def ranges_for_region(self, predicate: GeoPredicate) -> Optional[list[tuple[int, int]]]:
        if predicate.region.crs == CRS.FLAT:
            return None   # $box, $polygon, $center: flat shapes have no cell covering
        return s2keys.region_intervals(predicate.region, self.params)

    def encode_interval(self, lo: int, hi: int) -> tuple[bytes, bytes]:
        return s2keys.encode_cell(lo), s2keys.encode_cell(hi)

    def explain_intervals(self, intervals: list[tuple[int, int]]) -> list[str]:
        return [f"[{lo}, {hi}]" for lo, hi in intervals]

    @staticmethod
    def normalize(name: str, key: dict, options: dict) -> tuple[dict, dict]:
        """New indexes are built in the current key format, recorded in the catalog entry."""
        return key, {**options, s2keys.FORMAT_OPTION: s2keys.KEY_FORMAT_VERSION}

    @staticmethod
    def check_spec(key: dict, options: dict) -> None:
        """mongod's checks of a new 2dsphere index; the version it builds (3) is written into
        the stored spec, as mongod does."""
        geo = [f for f, d in key.items() if d == "2dsphere"]
        if len(geo) > 1:
            raise CommandError(ErrorCode.NotImplemented, "2dsphere indexes with more than one "
                               "2dsphere field are not supported by ginkgodb")
        others = [d for d in key.values() if isinstance(d, str) and d != "2dsphere"]
        if others:
            raise CommandError(ErrorCode.CannotCreateIndex,
                               "Can't use more than one index plugin for a single index.")
        if options.get("unique"):
            raise CommandError(ErrorCode.CannotCreateIndex,
                               "Index type '2dsphere' does not support the unique option")
        options.setdefault("2dsphereIndexVersion", s2keys.DEFAULT_INDEX_VERSION)
        version = options["2dsphereIndexVersion"]
        if isinstance(version, float) and version == int(version):
            options["2dsphereIndexVersion"] = int(version)
        s2_params_from_spec(options)
