"""The geospatial core: GeoJSON and legacy shapes, exact predicates, 2dsphere and 2d index keys
and scan ranges, and near search, as mongod 7.0 computes them. Pure functions: no storage or
engine access; the index access methods call them (docs/design/geo-index.md).

Spherical geometry comes from S2 (the s2geometry bindings); flat 2d shapes are plane arithmetic.
"""
from __future__ import annotations

from .codes import GeoCode
from .geohash import TwoDParams
from .geohash import params_from_spec as twod_params_from_spec
from .geojson import GeoError, parse_geojson, parse_point, parse_stored
from .near import near_2d, near_2dsphere, near_brute_force
from .predicates import distance_meters, flat_distance, intersects, sphere_distance, within
from .query import GeoPredicate, NearQuery, parse_geo_predicate, parse_near, parse_region
from .s2keys import S2IndexParams
from .s2keys import params_from_spec as s2_params_from_spec
from .shapes import CRS, Geometry

__all__ = ["CRS", "GeoCode", "GeoError", "GeoPredicate", "Geometry", "NearQuery",
           "S2IndexParams", "TwoDParams", "distance_meters", "flat_distance", "intersects",
           "near_2d", "near_2dsphere", "near_brute_force", "parse_geo_predicate",
           "parse_geojson", "parse_near", "parse_point", "parse_region", "parse_stored",
           "s2_params_from_spec", "sphere_distance", "twod_params_from_spec", "within"]
