"""Covered queries: answering a find's projection from index keys, without reading documents.

mongod's rule: an index scan covers a query when the index holds every field the projection
returns (`_id` too unless it is excluded), the filter needs nothing but the index bounds, a sort
reads only index fields, and the index is not multikey on those fields; the plan is then
PROJECTION_COVERED over the IXSCAN, with no FETCH.

Only B-tree keys can be read back as values, and ginkgodb's keys keep a value's order, not its
BSON type (docs/design/keycodec.md: int32 1, Int64(1), 1.0 and Decimal128("1.0") share one
encoding) nor the difference between null and a missing field. So a key whose projected values
are all of a type the key restores exactly (strings, ObjectIds, dates, booleans, binary data,
timestamps, regular expressions, MinKey/MaxKey) is answered from the key alone; a key holding a
number, null, a document or an array reads the document (counted in docsExamined), so the
results are always those of the uncovered plan.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Optional

from bson.decimal128 import Decimal128
from bson.int64 import Int64

from ..bsonutil.keycodec import decode_key
from . import plan_stages as S

_AMBIGUOUS = (int, float, Int64, Decimal128, dict, list, bytes, type(None))


def _ambiguous(value: Any) -> bool:
    """Whether a decoded key value may stand for values of other BSON types (numbers, null or
    missing, containers of them, binary subtypes); booleans are exact."""
    return type(value) is not bool and isinstance(value, _AMBIGUOUS)


def simple_projection(spec: Any) -> Optional[list[str]]:
    """The paths an inclusion projection of plain fields returns (with `_id` unless excluded),
    or None for any other projection (exclusions, expressions, positional, `$slice`...)."""
    if not isinstance(spec, dict) or not spec:
        return None
    paths = []
    include_id = True
    for path, value in spec.items():
        if isinstance(value, bool) or isinstance(value, (int, float)) and not isinstance(value, bool):
            on = bool(value)
        else:
            return None
        if not isinstance(path, str) or "$" in path or not path:
            return None
        if path == "_id":
            include_id = on
            continue
        if not on:
            return None   # an exclusion projection returns fields the index may not hold
        paths.append(path)
    if not paths and not include_id:
        return None
    if include_id:
        paths.insert(0, "_id")
    return paths


def covered_fields(meta: Any, projection: Any, sort: Optional[dict]) -> Optional[list[str]]:
    """The projected paths when an exact scan of index `meta` covers the query, else None."""
    paths = simple_projection(projection)
    if paths is None:
        return None
    key = meta.key
    if any(not isinstance(d, (int, float)) or isinstance(d, bool) for d in key.values()):
        return None   # hashed, text, geo, wildcard: the key is no value
    if meta.collation is not None:
        return None   # strings are keyed by their collation keys
    fields = list(key)
    if any(a != b and b.startswith(a + ".") for a in fields for b in fields):
        return None
    needed = list(paths) + [f for f in (sort or {}) if f != "$natural"]
    if any(p not in key for p in needed):
        return None
    multikey = meta.multikey_paths
    if any(m == p or p.startswith(m + ".") for m in multikey for p in needed):
        return None
    return paths


class CoveredKeys(S.Stage):
    """In place of FETCH over an exact IXSCAN: each record as the document its key describes
    (the index fields only), or the stored document when the key's projected values do not
    say their BSON type. Not an explain stage: explain shows the IXSCAN under the projection."""

    name = "COVERED_KEYS"

    def __init__(self, state: Any, reader: Any, scan: S.IndexScan, projected: list[str]) -> None:
        super().__init__()
        self.state, self.reader, self.child = state, reader, scan
        meta = scan.index.meta
        self.fields = [f.split(".") for f in meta.key]
        self.directions = [-1 if d < 0 else 1 for d in meta.key.values()]
        names = list(meta.key)
        self.checked = [names.index(p) for p in projected]
        self.fetched = 0
        scan.keep_keys = True

    def rows(self) -> Iterator[S.Row]:
        scan, fields, directions, checked = self.child, self.fields, self.directions, self.checked
        reader, record_key, stored = self.reader, self.state.record_key, S._stored_document
        for rid in scan.rids():
            values = decode_key(scan.current_key()[1], directions)
            if any(_ambiguous(values[i]) for i in checked):
                value = reader.get(record_key(rid))
                if value is None:
                    continue   # deleted since the index entry was read
                self.fetched += 1
                self.n_returned += 1
                yield rid, stored(value), None
                continue
            doc: dict = {}
            for parts, v in zip(fields, values):
                cur = doc
                for part in parts[:-1]:
                    cur = cur.setdefault(part, {})
                cur[parts[-1]] = v
            self.n_returned += 1
            yield rid, None, doc

    def explain(self, stats: bool) -> dict:
        return self.child.explain(stats)

    def keys_examined(self) -> int:
        return self.child.keys_examined()

    def docs_examined(self) -> int:
        return self.fetched
