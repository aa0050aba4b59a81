"""mongod's assertion ids for geospatial failures that have no name in error_codes.yml.

Clients see them as `Location<N>` (see `ginkgodb.errors.code_name`); the names here only say
what each one means. DO NOT renumber: the numbers are mongod's.
"""
from __future__ import annotations

import enum


class GeoCode(enum.IntEnum):
    """Numbered geo assertions (clients see codeName `Location<N>`)."""

    GEO_FIELD_EMPTY = 13067              # 2d: "geo field is empty"
    GEO_FIELD_ONE_ELEMENT = 13068        # 2d: "geo field only has 1 element"
    GEO_VALUES_NOT_PAIRS = 13026         # 2d: "geo values must be 'legacy coordinate pairs' ..."
    POINT_NOT_IN_INTERVAL = 13027        # 2d: "point not in interval of [ min, max ]" (documents)
    QUERY_POINT_NOT_IN_INTERVAL = 16433  # 2d: the same for a query point
    LOCATION_ARRAY_FORMAT = 13654        # 2d: "location object expected, location array not in correct format"
    CANT_EXTRACT_GEO_KEYS = 16755        # 2dsphere: "Can't extract geo keys: <doc>  <reason>"
    NO_GEO_KEYS = 16757                  # 2dsphere: empty covering
    COARSEST_LEVEL_MIN = 16747           # "coarsestIndexedLevel must be >= 0"
    FINEST_LEVEL_MAX = 16748             # "finestIndexedLevel must be <= 30"
    FINEST_BELOW_COARSEST = 16749        # "finestIndexedLevel must be >= coarsestIndexedLevel"
    UNSUPPORTED_INDEX_VERSION = 17395    # "unsupported geo index version ..."
    NEAR_MAX_DISTANCE_NEGATIVE = 18522   # legacy near: "max distance must be non-negative"
    MIN_DISTANCE_NOT_NUMBER = 16893      # legacy near: "$minDistance must be a number"
    MIN_DISTANCE_NEGATIVE = 16894        # legacy near: "$minDistance must be non-negative"
    MAX_DISTANCE_NOT_NUMBER = 16895      # legacy near: "$maxDistance must be a number"
    MAX_DISTANCE_NEGATIVE = 16896        # legacy near: "$maxDistance must be non-negative"
    NEAR_BAD_ARGUMENT = 34413            # legacy near: "invalid argument in geo near query: <name>"
