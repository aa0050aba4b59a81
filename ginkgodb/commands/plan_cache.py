"""planCacheClear and the index filters: planCacheSetFilter, planCacheListFilters and
planCacheClearFilters (the cache itself and `$planCacheStats`: engine/plan_cache.py).

A query shape is named as mongod names it: `query` (required where a shape is meant), with
`sort`, `projection` and `collation`; the values in them do not matter, only the shape.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

from ..engine import IndexFilter, query_shape_key
from ..errors import CommandError, ErrorCode
from .context import CommandContext
from .declare import Args, Target, command, doc, on_collection, value

_SHAPE = (value("query"), doc("sort"), doc("projection"), doc("collation"))


def _shape(args: Args, required: bool) -> Optional[tuple]:
    """The shape the command names, or None (no `query`, where it may be left out)."""
    query = args.query
    if query is None:
        if required:
            raise CommandError(ErrorCode.BadValue, "required field query missing")
        if args.sort or args.projection or args.collation:
            raise CommandError(ErrorCode.BadValue, "sort, projection and collation require a query")
        return None
    if not isinstance(query, Mapping):
        raise CommandError(ErrorCode.BadValue, "required field query must be an object")
    return query_shape_key(dict(query), args.sort or None, args.projection or None, args.collation or None)


@command("planCacheClear", help="Drop a collection's cached query plans, or those of one query shape.",
         fields=_SHAPE, target=Target.COLLECTION, privileges=(on_collection("planCacheWrite"),))
def plan_cache_clear(ctx: CommandContext, args: Args) -> dict:
    ctx.engine.plan_cache_clear(args.db, args.coll, _shape(args, required=False))
    return {}


@command("planCacheSetFilter", help="Limit the indexes the planner considers for a query shape.",
         fields=(*_SHAPE, value("indexes")), target=Target.COLLECTION,
         privileges=(on_collection("planCacheIndexFilter"),))
def plan_cache_set_filter(ctx: CommandContext, args: Args) -> dict:
    shape = _shape(args, required=True)
    assert shape is not None
    indexes: Any = args.indexes
    if "indexes" not in args.cmd:
        raise CommandError(ErrorCode.BadValue, "required field indexes missing")
    if not isinstance(indexes, list):
        raise CommandError(ErrorCode.BadValue, "required field indexes must be an array")
    if not indexes:
        raise CommandError(ErrorCode.BadValue, "indexes cannot be empty")
    for ix in indexes:
        if not isinstance(ix, (str, Mapping)) or (isinstance(ix, Mapping) and not ix):
            raise CommandError(ErrorCode.BadValue, "each item in indexes must be an object or string")
    index_filter = IndexFilter(dict(args.query), args.sort or {}, args.projection or {}, args.collation or None,
                               [ix if isinstance(ix, str) else dict(ix) for ix in indexes])
    if not ctx.engine.set_index_filter(args.db, args.coll, shape, index_filter):
        raise CommandError(ErrorCode.BadValue, "no such collection")
    return {}


@command("planCacheListFilters", help="The index filters of a collection.", target=Target.COLLECTION,
         privileges=(on_collection("planCacheRead"),))
def plan_cache_list_filters(ctx: CommandContext, args: Args) -> dict:
    return {"filters": ctx.engine.index_filters(args.db, args.coll)}


@command("planCacheClearFilters", help="Remove a collection's index filters, or the filter of one query shape.",
         fields=_SHAPE, target=Target.COLLECTION, privileges=(on_collection("planCacheIndexFilter"),))
def plan_cache_clear_filters(ctx: CommandContext, args: Args) -> dict:
    ctx.engine.clear_index_filters(args.db, args.coll, _shape(args, required=False))
    return {}
