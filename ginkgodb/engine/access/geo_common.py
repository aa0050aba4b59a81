"""What the 2dsphere and 2d access methods share: the values a geo field holds, and keys as
the cartesian product of every field's components (mongod's S2 and 2d key generators).

A key is the concatenation of its fields' keycodec encodings, as for a B-tree, so a compound
geo index (`{loc: "2dsphere", kind: 1}`) scans like any other once its components are known.
Non-geo fields are encoded one by one with the B-tree generator (missing -> null, arrays ->
one key per element), and multiplied out: geo indexes allow arrays on several fields.
"""
from __future__ import annotations

import itertools
from typing import Any

from ...bsonutil.paths import split_path
from ...query.index_keys import btree_keys
from ...query.match.paths import walk
from ...query.match.values import MISSING
from .entries import IndexEntries

MAX_KEYS_PER_DOCUMENT = 100_000


def field_values(doc: dict, path: str) -> list:
    """The values at a geo path: arrays on the way are searched, a trailing array is one value
    (a legacy pair or a list of them), missing values are left out."""
    out = []
    for value, _ in walk(doc, split_path(path), True):
        if value is not MISSING:
            out.append(value)
    return out


class GeoAccess(IndexEntries):
    """Keys of an index with one geo field (`geo_kind`) and any number of B-tree fields."""

    geo_kind = ""

    def __init__(self, meta: Any, ns: str) -> None:
        super().__init__(meta, ns)
        self.geo_field = next(f for f, d in self.pattern if d == self.geo_kind)

    def geo_components(self, doc: dict) -> list[bytes]:
        """Encoded geo components of a document ([] when it has none)."""
        raise NotImplementedError

    def document_keys(self, doc: dict) -> tuple[list[bytes], set]:
        per_field: list[list[bytes]] = []
        multikey: set = set()
        for field, direction in self.pattern:
            if field == self.geo_field:
                components = self.geo_components(doc)
                if not components:
                    return [], set()   # no geo value: the document is not indexed
                if len(components) > 1:
                    multikey.add(field)
            else:
                components, paths = btree_keys(doc, [(field, direction)])
                multikey |= paths
            per_field.append(components)
        keys = sorted({b"".join(parts) for parts in itertools.product(*per_field)})
        return keys, multikey
