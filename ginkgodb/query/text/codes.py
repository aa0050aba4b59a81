"""mongod's numeric error codes for text search that have no name in error_codes.yml.

mongod raises these with `uassert(<number>, ...)`; the client sees codeName `Location<number>`.
`CANNOT_BUILD_INDEX_KEYS` does have a name (CannotBuildIndexKeys) but is not in `ErrorCode` yet.
"""
from __future__ import annotations

LANGUAGE_OVERRIDE_NOT_STRING = 17261   # "found language override field in document with non-string type"
LANGUAGE_OVERRIDE_UNSUPPORTED = 17262  # "language override unsupported: <name>"
CANNOT_BUILD_INDEX_KEYS = 201          # an array on a text index's prefix or suffix path
UNRECOGNIZED_INDEX_LANGUAGE = 28682    # a stored spec whose default_language this build does not know
