"""Which chunks a filter can touch (docs/design/sharding.md, targeting rules). Pure.

`target(filter, chunk_map)` returns the chunks that may hold matching documents, or None for
"every shard" (broadcast). It only ever over-approximates: a filter the rules do not understand
targets everything, so a routed query never misses a document.
"""
from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Mapping
from typing import Any, Optional

from bson.int64 import Int64
from bson.max_key import MaxKey
from bson.min_key import MinKey
from bson.regex import Regex

from ..bsonutil.keycodec import encode_key, encode_value
from ..bsonutil.keyhash import hash_value
from .chunks import Chunk, ChunkMap

MAX_POINTS = 512
_TOP = bytes([255])
_ABSENT = object()


def _conditions(filter: Mapping) -> dict[str, list[Any]]:
    """Top-level conditions per field, `$and` flattened."""
    out: dict[str, list[Any]] = {}
    for k, v in filter.items():
        if k == "$and" and isinstance(v, list):
            for part in v:
                if isinstance(part, Mapping):
                    for f, c in _conditions(part).items():
                        out.setdefault(f, []).extend(c)
        elif not k.startswith("$"):
            out.setdefault(k, []).append(v)
    return out


def _plain(v: Any) -> bool:
    """A value an equality can target by (not a regex, not an array: shard keys hold neither)."""
    return not isinstance(v, (list, Regex)) and not hasattr(v, "pattern")


def _is_operator_doc(v: Any) -> bool:
    return isinstance(v, Mapping) and bool(v) and all(isinstance(k, str) and k.startswith("$") for k in v)


def _field_points(conds: list[Any]) -> Optional[list[Any]]:
    """The values the field must equal, from one of its conditions; None if none pins it."""
    for c in conds:
        if not _is_operator_doc(c):
            if _plain(c):
                return [c]
            continue
        if "$eq" in c and _plain(c["$eq"]):
            return [c["$eq"]]
        if "$in" in c and isinstance(c["$in"], list) and all(_plain(x) for x in c["$in"]) and c["$in"]:
            return list(c["$in"])
    return None


def _field_range(conds: list[Any]) -> Optional[tuple[Any, Any]]:
    """(low, high) from $gt/$gte/$lt/$lte, inclusive over-approximations; None if unbounded."""
    low: Any = MinKey()
    high: Any = MaxKey()
    found = False
    for c in conds:
        if not _is_operator_doc(c):
            continue
        for op in ("$gt", "$gte"):
            if op in c and _plain(c[op]):
                low, found = c[op], True
        for op in ("$lt", "$lte"):
            if op in c and _plain(c[op]):
                high, found = c[op], True
    return (low, high) if found else None


_UNSET = object()


def _hashed_mins(cmap: ChunkMap) -> Optional[list[float]]:
    """The chunks' lower bounds as numbers, for a key of one hashed field (MinKey: -inf); None
    when a bound is not an integer. Bisecting a hash among them gives its chunk without the key
    codec's exact 64-bit encoding, the costliest step of a targeted read's routing."""
    found = cmap.__dict__.get("_hashed_mins", _UNSET)   # kept on the (immutable) map, as its shard versions
    if found is not _UNSET:
        return found
    field = cmap.key.fields[0]
    mins: Optional[list[float]] = []
    for c in cmap.chunks:
        v = c.min.get(field)
        if isinstance(v, MinKey):
            mins.append(-math.inf)   # type: ignore[union-attr]
        elif isinstance(v, int) and not isinstance(v, bool):
            mins.append(v)   # type: ignore[union-attr]
        else:
            mins = None
            break
    cmap.__dict__["_hashed_mins"] = mins
    return mins


def _chunk_index(values: Any, cmap: ChunkMap, by_int: Optional[list[float]]) -> int:
    """The index of the chunk holding the shard key `values` (one per key field, not hashed)."""
    key = cmap.key
    if by_int is not None:   # the hash's place among the chunks' integer bounds
        return max(0, bisect.bisect_right(by_int, hash_value(values[0])) - 1)
    vals = [Int64(hash_value(v)) if i == key.hashed else v for i, v in enumerate(values)]
    return cmap.index_of(encode_key(vals))


def point_shard(filter: Mapping, cmap: ChunkMap) -> Optional[str]:
    """The shard owning the one shard key value `filter` pins with a plain top-level equality on
    every key field (`{_id: 5}`), or None for any other filter (`target` decides those). Other
    conditions only narrow the match, so its documents all lie in that value's chunk: the same
    answer as `target` and `full_key_equality`, without their general walk of the filter."""
    key = cmap.key
    values = []
    for f in key.fields:
        v = filter.get(f, _ABSENT)
        if v is _ABSENT or isinstance(v, Mapping) or not _plain(v):
            return None
        values.append(v)
    by_int = _hashed_mins(cmap) if len(key.fields) == 1 and key.hashed == 0 else None
    return cmap.chunks[_chunk_index(values, cmap, by_int)].shard


def target(filter: Optional[Mapping], cmap: ChunkMap) -> Optional[list[Chunk]]:
    """The chunks `filter` can match in, or None (broadcast)."""
    if not filter:
        return None
    key = cmap.key
    conds = _conditions(filter)
    per_field = [_field_points(conds.get(f, [])) for f in key.fields]
    if all(p is not None for p in per_field):
        combos = 1
        for p in per_field:
            combos *= len(p or ())
        if combos <= MAX_POINTS:
            chunks: dict[int, Chunk] = {}
            by_int = _hashed_mins(cmap) if len(key.fields) == 1 and key.hashed == 0 else None
            for values in itertools.product(*per_field):   # type: ignore[arg-type]
                i = _chunk_index(values, cmap, by_int)
                chunks[i] = cmap.chunks[i]
            return [chunks[i] for i in sorted(chunks)]
    if key.hashed == 0:
        return None
    first = per_field[0]
    if first is not None and len(first) <= MAX_POINTS:
        picked: dict[int, Chunk] = {}
        for v in first:
            low = encode_value(v)
            for c in cmap.overlapping(low, low + _TOP):
                picked[cmap.chunks.index(c)] = c
        return [picked[i] for i in sorted(picked)]
    bounds = _field_range(conds.get(key.fields[0], []))
    if bounds is None:
        return None
    low = encode_value(bounds[0])
    high = encode_value(bounds[1]) + _TOP
    return cmap.overlapping(low, high)


def shards_of(chunks: Optional[list[Chunk]], cmap: ChunkMap) -> list[str]:
    if chunks is None:
        return cmap.shards()
    return sorted({c.shard for c in chunks})


def full_key_equality(filter: Optional[Mapping], cmap: ChunkMap) -> bool:
    """Whether the filter pins every shard key field by equality (a single-document write may
    then go to one shard, as 7.0)."""
    if not filter:
        return False
    conds = _conditions(filter)
    return all(_field_points(conds.get(f, [])) is not None and len(_field_points(conds.get(f, [])) or []) == 1
               for f in cmap.key.fields)
