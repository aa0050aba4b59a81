"""The shard-side sharding commands of mongod 7.0: `splitVector` (where to cut a key range by
size or count), `checkShardingIndex` (is there an index a shard key can use) and
`cleanupOrphaned` (wait until this shard's range deleter removed the documents it does not own).

splitVector picks its cuts with commands/split_points.py, the rule the router's splitting by
size uses too: the keys of the range, read through an index prefixed by the key pattern, with a
cut every keyCount keys (keyCount = maxChunkSize / (2 * average document size), at most
maxChunkObjects), never between two entries with the same key value. The orphans this shard
holds are those a router flagged (shard_versions.py) until its range deleter cleared the flag.
"""
from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from typing import Any, Optional

import bson
from bson.max_key import MaxKey
from bson.min_key import MinKey

from ..bsonutil.shell_format import format_document
from ..engine import FindRequest
from ..errors import CommandError, ErrorCode
from ..limits import MAX_BSON_OBJECT_SIZE
from .context import CommandContext
from .declare import Args, boolean, command, doc, on_cluster, value
from .replies import ErrmsgOnlyFailure
from .shard_versions import wait_orphans_deleted
from .split_points import cut_points

#: splitVector's maxChunkObjects when none is given (mongod's kMaxObjectPerChunk)
MAX_OBJECTS_PER_CHUNK = 250_000
#: the bytes an array element adds beside its value (mongod's estimate for the reply's size)
ARRAY_ITEM_OVERHEAD = 8
#: how often a waiting cleanupOrphaned checks for interruption and maxTimeMS
WAIT_SLICE = 0.25


def _namespace(value: Any) -> tuple[str, str]:
    """A fully qualified namespace argument, checked as mongod's parseNsFullyQualified."""
    if not isinstance(value, str):
        raise CommandError(ErrorCode.BadValue, f"collection name has invalid type {_type_name(value)}")
    db, dot, coll = value.partition(".")
    if not dot or not db or not coll:
        raise CommandError(ErrorCode.InvalidNamespace, f"Invalid namespace specified '{value}'")
    return db, coll


def _type_name(v: Any) -> str:
    from ..bsonutil.types import type_name
    return type_name(v)


def _object(v: Any) -> dict:
    """mongod's getObjectField: the field's document, or {} when it is absent or not a document."""
    return dict(v) if isinstance(v, Mapping) else {}


def _same_value(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b)


def _is_prefix(key_pattern: Mapping, index_key: Mapping) -> bool:
    """mongod's BSONObj::isPrefixOf: the pattern's fields and values lead the index's key."""
    pattern, key = list(key_pattern.items()), list(index_key.items())
    return len(pattern) <= len(key) and all(p[0] == k[0] and _same_value(p[1], k[1]) for p, k in zip(pattern, key))


def shard_key_index(meta: Any, key_pattern: Mapping, require_single_key: bool,
                    reasons: Optional[list[str]] = None) -> Any:
    """The index a shard key `key_pattern` can use (mongod's findShardKeyPrefixedIndex): prefixed
    by the pattern, neither partial nor sparse, simple collation, and not multikey when
    `require_single_key`; a single-key index first. `reasons` collects why each index that
    cannot be used was refused (mongod's messages)."""
    best = None
    for ix in meta.indexes:
        why = [m for m, bad in (("Index key is partial.", ix.partial), ("Index key is sparse.", ix.sparse)) if bad]
        prefix = _is_prefix(key_pattern, ix.key)
        simple = not ix.options.get("collation")
        if not why and prefix:
            if require_single_key and ix.multikey_paths:
                why.append("Index key is multikey.")
            elif simple:
                if not ix.multikey_paths:
                    return ix
                best = best or ix
                continue
            if not simple:
                why.append("Index has a non-simple collation.")
        if not prefix:
            why.append("Shard key is not a prefix of index key.")
        if reasons is not None:
            reasons.append(f"Index {ix.name} cannot be used for sharding because: " + " ".join(why))
    return best


def _extend(bound: Mapping, index_key: Mapping, upper: bool) -> dict:
    """mongod's KeyPattern::extendRangeBound: the bound's values for the index's fields, the
    fields it lacks filled with MinKey (MaxKey for an upper bound; flipped for descending)."""
    out = {}
    for name, direction in index_key.items():
        if name in bound:
            out[name] = bound[name]
            continue
        order = int(direction) if isinstance(direction, (int, float)) and not isinstance(direction, bool) else 1
        out[name] = MaxKey() if (order > 0) == upper else MinKey()
    return out


def _keys(ctx: CommandContext, db: str, coll: str, ix: Any, low: dict, high: dict,
          fields: list[str]) -> Iterator[tuple[list[Any], int]]:
    """The index keys in [low, high) in index order, as (values of `fields`, 1)."""
    cursor = ctx.engine.find(db, coll, FindRequest(hint=ix.name, min_key=low, max_key=high, return_key=True), ctx)
    try:
        while True:
            batch = cursor.next_batch(1000, ctx)
            if not batch:
                return
            for raw in batch:
                key = bson.decode(raw.raw)
                yield [key.get(f) for f in fields], 1
    finally:
        cursor.close()


def _true_value(v: Any) -> bool:
    """mongod's BSONElement::trueValue: false for an absent or null field, false and zero."""
    if v is None or isinstance(v, bool):
        return bool(v)
    return v != 0 if isinstance(v, (int, float)) else True


def _number(v: Any) -> Optional[int]:
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


@command("splitVector", help="Internal command.\nexamples:\n  { splitVector : \"blog.post\" , keyPattern:{x:1} , "
                             "min:{x:10} , max:{x:20}, maxChunkSize:200 }\n  maxChunkSize unit in MBs\n  May "
                             "optionally specify 'maxSplitPoints' and 'maxChunkObjects' to avoid traversing the "
                             "whole chunk\n  \n  { splitVector : \"blog.post\" , keyPattern:{x:1} , min:{x:10} , "
                             "max:{x:20}, force: true }\n  'force' will produce one split point even if data is "
                             "small; defaults to false\nNOTE: This command may take a while to run",
         fields=(value("keyPattern"), value("min"), value("max"), value("force"), value("maxSplitPoints"),
                 value("maxChunkObjects"), value("maxChunkSize"), value("maxChunkSizeBytes")),
         privileges=(on_cluster("splitVector"),))
def split_vector(ctx: CommandContext, args: Args) -> dict:
    db, coll = _namespace(args.value)
    key_pattern = _object(args.key_pattern)
    if not key_pattern:
        raise ErrmsgOnlyFailure("no key pattern found in splitVector")
    low_given, high_given = _object(args.min), _object(args.max)
    if bool(low_given) != bool(high_given):
        raise ErrmsgOnlyFailure("either provide both min and max or leave both empty")
    force = _true_value(args.force)
    max_points = _number(args.max_split_points)
    max_objects = _number(args.max_chunk_objects) or MAX_OBJECTS_PER_CHUNK
    meta = ctx.engine.collection_entry(db, coll)
    if meta is None:
        raise CommandError(ErrorCode.NamespaceNotFound, "ns not found")
    ix = shard_key_index(meta, key_pattern, require_single_key=False)
    if ix is None:
        raise CommandError(ErrorCode.IndexNotFound,
                           f"couldn't find index over splitting key {format_document(key_pattern)}")
    low = _extend(low_given, ix.key, upper=False)
    high = _extend(high_given, ix.key, upper=not high_given)
    sizes = ctx.engine.collection_stats(db, coll)
    count, data_size = (sizes.count, sizes.data_size) if sizes is not None else (0, 0)
    max_size = _number(args.max_chunk_size)
    if force:
        max_size = data_size
    elif max_size is None:
        max_size = _number(args.max_chunk_size_bytes)
    else:
        max_size = max_size << 20
    if not max_size or max_size <= 0:
        raise CommandError(ErrorCode.InvalidOptions, "need to specify the desired max chunk size")
    if data_size < max_size or count == 0:
        return {"splitKeys": []}
    fields = list(key_pattern)
    entries: Any = _keys(ctx, db, coll, ix, low, high, fields)
    if force:   # one cut, at the middle key of the range
        entries = list(entries)
        cuts = cut_points(entries, len(entries) // 2, max_points=1)
    else:
        key_count = min(max_size // (2 * max(1, data_size // count)), max_objects)
        cuts = cut_points(entries, key_count, max_points=max_points or 0)
    return {"splitKeys": _capped([dict(zip(fields, values)) for values in cuts])}


def _capped(keys: list[dict]) -> list[dict]:
    """The split keys that fit a reply (mongod stops at the BSON size limit, keeping at least one)."""
    total = 0
    for i, key in enumerate(keys):
        total += len(bson.encode(key)) + ARRAY_ITEM_OVERHEAD
        if total > MAX_BSON_OBJECT_SIZE and i:
            return keys[:i]
    return keys


@command("checkShardingIndex", help="Internal command.\n",
         fields=(value("keyPattern"),), privileges=(on_cluster("checkShardingIndex"),))
def check_sharding_index(ctx: CommandContext, args: Args) -> dict:
    db, coll = _namespace(args.value)
    key_pattern = _object(args.key_pattern)
    if not key_pattern:
        raise ErrmsgOnlyFailure("no key pattern found in checkShardingindex")
    if list(key_pattern) == ["_id"]:
        return {"idskip": True}
    meta = ctx.engine.collection_entry(db, coll)
    if meta is None:
        raise ErrmsgOnlyFailure("ns not found")
    reasons: list[str] = []
    if shard_key_index(meta, key_pattern, require_single_key=True, reasons=reasons) is None:
        raise ErrmsgOnlyFailure("\n".join(["couldn't find valid index for shard key", *reasons]))
    return {}


@command("cleanupOrphaned", admin_only=True,
         help="waits for the orphaned documents of a namespace on this shard to be deleted",
         fields=(doc("startingFromKey"), boolean("secondaryThrottle")),
         privileges=(on_cluster("cleanupOrphaned"),))
def cleanup_orphaned(ctx: CommandContext, args: Args) -> dict:
    """As 7.0: the arguments but the namespace are deprecated and do not bound the wait; it
    returns once the range deleter removed every range of the namespace this shard does not
    own (at once for a collection it holds no orphans of), or fails at maxTimeMS."""
    _namespace(args.value)
    ns = str(args.value)
    while not wait_orphans_deleted(ns, WAIT_SLICE):
        ctx.check_interrupt()
        time.sleep(0)
    return {}


__all__ = ["check_sharding_index", "cleanup_orphaned", "shard_key_index", "split_vector"]
