"""The plan cache and index filters (docs/design/plan_cache.md): mongod's per-collection cache of
the plans its multi-planner chose, `planCacheClear`, index filters and `$planCacheStats`.

A query whose candidate plans tie on the planner's ranking runs a trial of each (plan_builder's
`_trial`); the winner is cached under the query's shape, the filter, sort, projection and
collation with values replaced by what can change the choice (their types, a regex's pattern),
so the next query of that shape takes the cached index without a trial. A query the ranking
decides alone is not cached, as mongod caches only multi-planned queries.

An entry lives as long as its collection's catalog entry: an index built or dropped, a collMod
or a drop replaces the entry and so starts an empty cache. An entry whose plan, on its last use,
examined more than EVICTION_RATIO times the work of its trial and returned fewer results than a
trial period is dropped before its next use, and that query is planned again (mongod's replanning
when the data drifted; mongod decides during the query itself).

Index filters (`planCacheSetFilter`) limit the indexes the planner may consider for one shape,
and make it ignore a hint, as mongod's. They live in memory for the life of the process, keyed by
the collection's uuid, and survive index changes (not a drop, which gives a new uuid).
"""
from __future__ import annotations

import datetime
import hashlib
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Optional

from bson.regex import Regex

#: an entry is dropped when its plan, on a use, did this many times its trial's work
EVICTION_RATIO = 10
#: entries kept per collection, least recently used dropped first
MAX_ENTRIES = 5000
#: mongod's trial period: a use that returned this many results was not over-working
TRIAL_RESULTS = 101


def _value_shape(value: Any) -> Any:
    """What of a value can change which index a query may use: its type, and a regex's pattern
    and flags (a prefix regex has bounds, another does not); documents and arrays by element."""
    kind = type(value)
    if kind is dict or isinstance(value, Mapping):
        return ("d", tuple((k, _value_shape(v)) for k, v in value.items()))
    if kind is list or kind is tuple:
        return ("a", tuple(_value_shape(v) for v in value))
    if isinstance(value, (Regex, re.Pattern)):
        return ("r", value.pattern, value.flags)
    return kind.__name__


def shape_key(filt: Optional[Mapping], sort: Optional[Mapping] = None, projection: Optional[Mapping] = None,
              collation: Optional[Mapping] = None) -> tuple:
    """The query's shape: what the plan cache and index filters are keyed by."""
    return (_value_shape(filt or {}),
            tuple((k, _value_shape(v)) for k, v in (sort or {}).items()),
            tuple((k, _value_shape(v)) for k, v in (projection or {}).items()),
            tuple(sorted((k, repr(v)) for k, v in (collation or {}).items())))


def shape_hash(key: tuple) -> str:
    """mongod's eight-hex-digit queryHash / planCacheShapeHash of a shape."""
    return hashlib.sha256(repr(key).encode()).hexdigest()[:8].upper()


def cache_key_hash(key: tuple, indexes: list) -> str:
    """planCacheKey: the shape together with the indexes (access methods) it is planned against."""
    names = tuple(ix.meta.name for ix in indexes)
    return hashlib.sha256(repr((key, names)).encode()).hexdigest()[:8].upper()


class PlanCacheEntry:
    """One cached choice: the winning index of a shape's trial, and what the trial measured."""

    __slots__ = ("index_name", "works", "created", "query", "sort", "projection", "collation",
                 "cached_plan", "scores", "hash", "key_hash", "last_use")

    def __init__(self, index_name: str, works: int, query: dict, sort: Optional[dict], projection: Optional[dict],
                 collation: Optional[dict], cached_plan: dict, scores: list, hash: str, key_hash: str) -> None:
        self.index_name = index_name
        self.works = works
        self.created = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
        self.query, self.sort, self.projection, self.collation = query, sort, projection, collation
        self.cached_plan = cached_plan
        self.scores = scores
        self.hash, self.key_hash = hash, key_hash
        self.last_use: Any = None     # the stages of the last query that took this entry

    def over_worked(self) -> bool:
        """Did the last query that took this plan do more than EVICTION_RATIO times its trial's
        work for fewer results than a trial period? (the replanning rule)"""
        root = self.last_use
        if root is None:
            return False
        keys, docs = root.counts()
        return keys + docs > EVICTION_RATIO * self.works and root.n_returned < TRIAL_RESULTS

    def describe(self, ns: str) -> dict:
        """The entry as `$planCacheStats` shows it."""
        created_from: dict = {"query": self.query, "sort": self.sort or {}, "projection": self.projection or {}}
        if self.collation:
            created_from["collation"] = self.collation
        return {"version": "1", "namespace": ns, "queryHash": self.hash, "planCacheShapeHash": self.hash,
                "planCacheKey": self.key_hash, "isActive": True, "works": self.works,
                "timeOfCreation": self.created, "createdFromQuery": created_from, "cachedPlan": self.cached_plan,
                "candidatePlanScores": list(self.scores), "indexFilterSet": False,
                "estimatedSizeBytes": len(repr(self.cached_plan)) + 200, "host": "localhost"}


class CollectionPlanCache:
    """The entries of one collection at one catalog entry (its indexes, its options)."""

    def __init__(self, meta: Any) -> None:
        self.meta = meta
        self._entries: OrderedDict[tuple, PlanCacheEntry] = OrderedDict()

    def get(self, key: tuple) -> Optional[PlanCacheEntry]:
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry.over_worked():
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return entry

    def put(self, key: tuple, entry: PlanCacheEntry) -> None:
        self._entries[key] = entry
        self._entries.move_to_end(key)
        while len(self._entries) > MAX_ENTRIES:
            self._entries.popitem(last=False)

    def clear(self, key: Optional[tuple] = None) -> None:
        if key is None:
            self._entries.clear()
        else:
            self._entries.pop(key, None)

    def entries(self) -> list[PlanCacheEntry]:
        return list(self._entries.values())


class IndexFilter:
    """A planCacheSetFilter: the indexes (names or key patterns) a shape may use."""

    __slots__ = ("query", "sort", "projection", "collation", "indexes")

    def __init__(self, query: dict, sort: dict, projection: dict, collation: Optional[dict], indexes: list) -> None:
        self.query, self.sort, self.projection, self.collation = query, sort, projection, collation
        self.indexes = indexes

    def allows(self, meta: Any) -> bool:
        """Whether an index (its catalog entry) is one this filter names."""
        for ix in self.indexes:
            if isinstance(ix, str) and ix == meta.name:
                return True
            if isinstance(ix, Mapping) and list(ix.items()) == list(meta.key.items()):
                return True
        return False

    def describe(self) -> dict:
        out: dict = {"query": self.query, "sort": self.sort, "projection": self.projection}
        if self.collation:
            out["collation"] = self.collation
        out["indexes"] = list(self.indexes)
        return out


class PlanCaches:
    """Every collection's plan cache and index filters (one per engine)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._caches: dict[Any, CollectionPlanCache] = {}     # collection uuid -> its cache
        self._filters: dict[Any, dict[tuple, IndexFilter]] = {}

    def of(self, meta: Any) -> CollectionPlanCache:
        """The cache of a collection's catalog entry: a new one when the entry changed."""
        cache = self._caches.get(meta.uuid)
        if cache is None or cache.meta is not meta:
            with self._lock:
                cache = self._caches.get(meta.uuid)
                if cache is None or cache.meta is not meta:
                    cache = self._caches[meta.uuid] = CollectionPlanCache(meta)
        return cache

    def entries(self, meta: Any) -> list[PlanCacheEntry]:
        cache = self._caches.get(meta.uuid)
        return cache.entries() if cache is not None and cache.meta is meta else []

    def clear(self, meta: Any, key: Optional[tuple] = None) -> None:
        cache = self._caches.get(meta.uuid)
        if cache is not None:
            with self._lock:
                cache.clear(key)

    # -- index filters ----------------------------------------------------------------------
    def filter_for(self, meta: Any, key: tuple) -> Optional[IndexFilter]:
        filters = self._filters.get(meta.uuid)
        return filters.get(key) if filters else None

    def has_filters(self, meta: Any) -> bool:
        # every shortcut plan asks; with no filter set anywhere, no UUID is hashed (a Python-level
        # Binary.__hash__)
        return bool(self._filters) and bool(self._filters.get(meta.uuid))

    def set_filter(self, meta: Any, key: tuple, index_filter: IndexFilter) -> None:
        with self._lock:
            self._filters.setdefault(meta.uuid, {})[key] = index_filter
        self.clear(meta, key)   # mongod drops the shape's cached plan with it

    def filters(self, meta: Any) -> list[IndexFilter]:
        return list(self._filters.get(meta.uuid, {}).values())

    def clear_filters(self, meta: Any, key: Optional[tuple] = None) -> None:
        with self._lock:
            filters = self._filters.get(meta.uuid)
            if filters is None:
                return
            if key is None:
                filters.clear()
            else:
                filters.pop(key, None)
        self.clear(meta, key)


__all__ = ["EVICTION_RATIO", "MAX_ENTRIES", "IndexFilter", "PlanCacheEntry", "PlanCaches", "cache_key_hash",
           "shape_hash", "shape_key"]
