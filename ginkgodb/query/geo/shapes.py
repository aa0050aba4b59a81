"""Parsed geometries: one container for every shape a document or a geo query can hold.

mongod's GeometryContainer holds exactly one of point, line, polygon, multi-point, multi-line,
multi-polygon, geometry collection, box, circle or cap. Every rule that compares two of them
(within, intersects, distance) walks their parts: a multi-geometry or a collection is the bag of
its points, lines and polygons. So one `Geometry` keeps those parts in lists, plus the flat
shapes of legacy queries, and `kind` remembers what was written.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from . import s2


class CRS(enum.Enum):
    """Coordinate reference systems (mongod's FLAT, SPHERE, STRICT_SPHERE)."""

    FLAT = "flat"            # legacy coordinate pairs and $box/$polygon/$center
    SPHERE = "sphere"        # GeoJSON (EPSG:4326), $centerSphere
    STRICT_SPHERE = "strict"  # urn:x-mongodb:crs:strictwinding:EPSG:4326 (big polygons)


def is_valid_lng_lat(lng: float, lat: float) -> bool:
    return -90 <= lat <= 90 and -180 <= lng <= 180


@dataclass(eq=False)
class Geometry:
    """One parsed shape. Spherical parts are S2 objects; flat parts are plain numbers."""

    kind: str
    crs: CRS
    # Spherical parts (points come with their leaf cells, mongod's S2Cell of a point).
    points: list = field(default_factory=list)
    cells: list = field(default_factory=list)
    lines: list = field(default_factory=list)
    polygons: list = field(default_factory=list)
    big_polygon: Any = None          # S2Polygon of a strict-winding loop (may exceed a hemisphere)
    cap: Any = None                  # S2Cap of $centerSphere
    cap_radius: float = 0.0          # its radius in radians
    # Flat parts.
    flat_point: tuple[float, float] | None = None   # x, y of a point (legacy or GeoJSON)
    box: tuple[float, float, float, float] | None = None   # min x, min y, max x, max y
    circle: tuple[float, float, float] | None = None       # center x, y, radius
    flat_polygon: list[tuple[float, float]] | None = None

    @property
    def is_point(self) -> bool:
        return self.kind == "Point"

    def supports_contains(self) -> bool:
        """May this geometry be a $geoWithin region (mongod's supportsContains)?"""
        return bool(self.polygons) or self.big_polygon is not None or self.box is not None \
            or self.cap is not None or self.circle is not None or self.flat_polygon is not None

    def can_project(self, crs: CRS) -> bool:
        """mongod's supportsProject: points move between FLAT and SPHERE when in range."""
        if self.is_point:
            if self.crs == crs or self.crs == CRS.SPHERE:
                return True
            return crs == CRS.SPHERE and is_valid_lng_lat(*self.flat_point)
        if self.kind == "Polygon":
            return self.crs == crs or (self.crs == CRS.STRICT_SPHERE and crs == CRS.SPHERE)
        return self.crs == crs

    def projected(self, crs: CRS) -> Geometry:
        """This geometry in `crs` (caller checked can_project). Only points really change."""
        if self.crs == crs or not self.is_point:
            return self
        if crs == CRS.FLAT:
            return Geometry("Point", CRS.FLAT, flat_point=self.flat_point)
        p = s2.point(*self.flat_point)
        return Geometry("Point", CRS.SPHERE, points=[p], cells=[s2.leaf_cell(p)],
                        flat_point=self.flat_point)

    def s2_regions(self) -> list:
        """The S2 regions whose union is this geometry (mongod's S2RegionUnion)."""
        if self.crs == CRS.FLAT:
            raise ValueError("a flat geometry has no S2 region")
        regions: list = list(self.cells) + list(self.lines) + list(self.polygons)
        if self.big_polygon is not None:
            regions.append(self.big_polygon)
        if self.cap is not None:
            regions.append(self.cap)
        return regions
