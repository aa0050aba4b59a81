"""The engine's API for the commands layer: typed requests in, results and handles out.

Commands call these methods and nothing deeper: they never open a write batch for a catalog
change, read the catalog's entries or reach into a collection's options themselves. Each method
is one engine operation (one write batch, or reads on one snapshot per cursor batch).
"""
from __future__ import annotations

import abc
import os
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any, Optional

from ..limits import MAX_INTERNAL_BSON_SIZE
from . import aggregate as pipelines
from . import bulk_insert, ddl, reads, timeseries, writes
from .batch import WriteBatch
from .catalog import Catalog, CollectionMeta
from .change_stream import ChangeStreamCursor
from .chunked_reader import ChunkedReader
from .conflicts import WaitForTransaction, write_conflict
from .cursors import PlanStats, ServerCursor, TailableCursor
from .plan_builder import FindRequest, collation_of
from .plan_cache import IndexFilter, PlanCaches
from .stats import CollectionSizes, collection_sizes, database_sizes
from .validation import validator

#: how long an ordinary write waits for a transaction holding what it changes (the transaction's
#: own lifetime limit ends it sooner)
MAX_WAIT_FOR_TRANSACTION = 120.0


def waits_for_transactions(fn: Callable) -> Callable:
    """An ordinary write that meets a document an open transaction changed rolls back, waits for
    that transaction to end, and runs again (docs/design/transactions.md)."""
    import functools

    @functools.wraps(fn)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        deadline = None    # from the first wait: an operation that never waits reads no clock
        while True:
            try:
                return fn(self, *args, **kwargs)
            except WaitForTransaction as wait:
                if deadline is None:
                    deadline = time.monotonic() + MAX_WAIT_FOR_TRANSACTION
                if not self.conflicts.wait_for(wait.owner, deadline):
                    raise write_conflict("the operation waited too long for a transaction to end") from None
    return run


@dataclass(frozen=True)
class IndexBuild:
    before: int
    after: int
    created_collection: bool
    note: Optional[str]


@dataclass(frozen=True)
class IndexChange:
    """collMod's `index` part: the index (by name or key pattern) and the options to set."""

    target: Any
    options: dict


class EngineOperations(abc.ABC):
    """The operations, over what Engine provides: its published catalog, write batches and
    readers."""

    kv: Any
    cursors: Any
    conflicts: Any
    oplog: Any
    plan_caches: PlanCaches

    @property
    @abc.abstractmethod
    def catalog(self) -> Catalog: ...

    @abc.abstractmethod
    def write(self, reclaims: bool = False) -> AbstractContextManager[WriteBatch]: ...

    @abc.abstractmethod
    def reader(self, txn: Any = None) -> ChunkedReader: ...

    def temp_dir(self) -> Optional[str]:
        """Where blocking stages spill: the data directory's `_tmp` (as mongod), or the system's
        temporary directory for an in-memory engine."""
        cached = self.__dict__.get("_temp_dir", False)
        if cached is False:  # every find asks: worked out once per engine
            path = getattr(self.kv, "path", None)
            cached = self.__dict__["_temp_dir"] = os.path.join(path, "_tmp") if isinstance(path, str) else None
        return cached

    @contextmanager
    def writers_paused(self) -> Iterator[None]:
        """No other write runs until the block ends (an empty write batch held open)."""
        with self.write():
            yield

    # ------------------------------------------------------------------ catalog changes
    def create_collection(self, db: str, name: str, options: Optional[dict] = None) -> None:
        with self.write() as batch:
            if options and "timeseries" in options:
                timeseries.create(batch, db, name, options)
                return
            ddl.create_collection(batch, db, name, options)

    @waits_for_transactions
    def drop_collection(self, db: str, name: str) -> Optional[int]:
        """The number of indexes it had, or None when there was no such collection."""
        if (db, name) == ("local", "oplog.rs") and self.oplog.enabled:
            from ..errors import CommandError, ErrorCode
            raise CommandError(ErrorCode.IllegalOperation, "can't drop live oplog while replicating")
        with self.write(reclaims=True) as batch:
            meta = batch.catalog.get(db, name)
            if meta is not None and timeseries.timeseries_options(meta) is not None:
                buckets = batch.catalog.get(db, timeseries.buckets_name(name))
                if buckets is not None:
                    ddl.drop_collection(batch, buckets)
                timeseries.forget(self, db, name)
            return None if meta is None else ddl.drop_collection(batch, meta)

    @waits_for_transactions
    def drop_database(self, db: str) -> None:
        if db == "local" and self.oplog.enabled:
            from ..errors import CommandError, ErrorCode
            raise CommandError(ErrorCode.IllegalOperation, "Cannot drop 'local' database while replication is active")
        with self.write(reclaims=True) as batch:
            metas = batch.catalog.in_db(db)
            for meta in metas:
                ddl.drop_collection(batch, meta)
            if metas:
                batch.dropped_database(db)

    @waits_for_transactions
    def rename_collection(self, src_db: str, src: str, dst_db: str, dst: str,
                          drop_target: bool) -> None:
        if ("local", "oplog.rs") in ((src_db, src), (dst_db, dst)) and self.oplog.enabled:
            from ..errors import CommandError, ErrorCode
            raise CommandError(ErrorCode.IllegalOperation, "can't rename live oplog while replicating")
        with self.write() as batch:
            meta = batch.catalog.get(src_db, src)
            if timeseries.timeseries_options(meta) is not None:
                from ..errors import CommandError, ErrorCode
                raise CommandError(ErrorCode.IllegalOperation, "Renaming a time-series collection is not allowed")
            if meta is None:
                from ..errors import CommandError, ErrorCode
                raise CommandError(ErrorCode.NamespaceNotFound,
                                   f"Source collection {src_db}.{src} does not exist")
            ddl.rename_collection(batch, meta, dst_db, dst, drop_target)

    @waits_for_transactions
    def set_clustered_ttl(self, db: str, name: str, seconds: Optional[float]) -> None:
        """collMod of a clustered collection's `expireAfterSeconds` (None: no TTL)."""
        from .clustered import set_ttl
        with self.write() as batch:
            meta = batch.catalog.get(db, name)
            if meta is not None:
                set_ttl(batch, meta, seconds)

    @waits_for_transactions
    def clone_collection_as_capped(self, db: str, source: str, target: str, size: float) -> None:
        from .capped_copy import clone_as_capped
        with self.write() as batch:
            clone_as_capped(batch, db, source, target, size)

    @waits_for_transactions
    def convert_to_capped(self, db: str, name: str, size: float) -> None:
        from .capped_copy import convert_to_capped
        with self.write(reclaims=True) as batch:
            convert_to_capped(batch, db, name, size)

    @waits_for_transactions
    def modify_collection(self, db: str, name: str, options: dict,
                          index: Optional[IndexChange] = None) -> dict:
        """collMod; returns the reply's `<option>_old`/`<option>_new` fields for an index change."""
        with self.write() as batch:
            meta = batch.catalog.get(db, name)
            if meta is None:
                from ..errors import CommandError, ErrorCode
                raise CommandError(ErrorCode.NamespaceNotFound, f"ns does not exist: {db}.{name}")
            if timeseries.timeseries_options(meta) is not None:
                from ..errors import CommandError, ErrorCode
                raise CommandError(ErrorCode.NotImplemented,
                                   "collMod of a time-series collection is not supported by ginkgodb yet")
            indexes, reply, logged = ((None, {}, None) if index is None
                                      else ddl.modify_index(meta, index.target, index.options))
            if index is not None and ("prepareUnique" in index.options or "unique" in index.options):
                from .unique_conversion import apply_unique_options
                indexes, more, logged_more = apply_unique_options(batch, meta, indexes, index.target, index.options)
                reply.update(more)
                if logged is not None:
                    logged[0].update(logged_more)
            ddl.modify_collection(batch, meta, options, indexes, logged)
        return reply

    def modify_timeseries(self, db: str, name: str, change: Any) -> dict:
        """collMod's `timeseries`: a coarser granularity for the buckets opened from now on."""
        with self.write() as batch:
            timeseries.modify(batch, db, name, change)
        return {}

    @waits_for_transactions
    def create_indexes(self, db: str, name: str, specs: list) -> IndexBuild:
        with self.write() as batch:
            ts = timeseries.timeseries_options(batch.catalog.get(db, name))
            if ts is not None:  # keys on measurements become keys on buckets
                name = timeseries.buckets_name(name)
                specs = [{**spec, "key": timeseries.bucket_index_key(ts, dict(spec.get("key") or {})),
                          "name": spec.get("name") or "_".join(f"{k}_{v}" for k, v in (spec.get("key") or {}).items())}
                         for spec in specs]
            created = batch.collection(db, name) is None
            coll = ddl.ensure_collection(batch, db, name)  # refuses views (166)
            before, after, note = ddl.create_indexes(batch, coll, specs)
        return IndexBuild(before, after, created, note)

    @waits_for_transactions
    def drop_indexes(self, db: str, name: str, which: Any) -> int:
        with self.write(reclaims=True) as batch:
            coll = batch.collection(db, name)
            if coll is None:
                from ..errors import CommandError, ErrorCode
                raise CommandError(ErrorCode.NamespaceNotFound, f"ns not found {db}.{name}")
            return ddl.drop_indexes(batch, coll, which)

    # ------------------------------------------------------------------ plan cache
    def plan_cache_entries(self, db: str, name: str) -> list[dict]:
        """The collection's cached plans as `$planCacheStats` shows them (none: no collection)."""
        meta = self.catalog.get(db, name)
        return [] if meta is None else [e.describe(meta.ns) for e in self.plan_caches.entries(meta)]

    def plan_cache_clear(self, db: str, name: str, shape: Optional[tuple] = None) -> None:
        """Drop the collection's cached plans, or those of one query shape (plan_cache.shape_key)."""
        meta = self.catalog.get(db, name)
        if meta is not None:
            self.plan_caches.clear(meta, shape)

    def index_filters(self, db: str, name: str) -> list[dict]:
        meta = self.catalog.get(db, name)
        return [] if meta is None else [f.describe() for f in self.plan_caches.filters(meta)]

    def set_index_filter(self, db: str, name: str, shape: tuple, index_filter: IndexFilter) -> bool:
        """Set a shape's index filter; False when the collection does not exist."""
        meta = self.catalog.get(db, name)
        if meta is None:
            return False
        self.plan_caches.set_filter(meta, shape, index_filter)
        return True

    def clear_index_filters(self, db: str, name: str, shape: Optional[tuple] = None) -> None:
        meta = self.catalog.get(db, name)
        if meta is not None:
            self.plan_caches.clear_filters(meta, shape)

    # ------------------------------------------------------------------ catalog reads
    def database_names(self) -> list[str]:
        return self.catalog.databases()

    def collections_of(self, db: str) -> list[CollectionMeta]:
        return self.catalog.in_db(db)

    def collection_entry(self, db: str, name: str) -> Optional[CollectionMeta]:
        return self.catalog.get(db, name)

    def index_specs(self, db: str, name: str) -> Optional[list[dict]]:
        """listIndexes' documents, or None when the collection does not exist."""
        meta = self.catalog.get(db, name)
        ts = timeseries.timeseries_options(meta)
        if ts is not None:
            buckets = self.catalog.get(db, timeseries.buckets_name(name))
            out = []
            for ix in buckets.indexes if buckets is not None else ():
                key = timeseries.user_index_key(ts, dict(ix.key))
                if key is not None:
                    out.append({**ix.spec(), "key": key})
            return out
        return None if meta is None else [ix.spec() for ix in meta.indexes]

    def validate_collection(self, db: str, name: str) -> dict:
        """validate's findings (engine/validate.py); NamespaceNotFound / a view refused as mongod."""
        from ..errors import CommandError, ErrorCode
        from .validate import validate_collection
        with self.reader() as reader:
            coll = reader.catalog.collection(db, name)
            meta = reader.catalog.get(db, name)
            if meta is not None and meta.is_view:
                raise CommandError(ErrorCode.CommandNotSupportedOnView, "Cannot validate a view")
            if coll is None:
                raise CommandError(ErrorCode.NamespaceNotFound,
                                   f"Collection '{db}.{name}' does not exist to validate.")
            return validate_collection(coll, reader)

    def collection_stats(self, db: str, name: str) -> Optional[CollectionSizes]:
        meta = self.catalog.get(db, name)
        if timeseries.timeseries_options(meta) is not None:
            meta = self.catalog.get(db, timeseries.buckets_name(name))
        return None if meta is None else collection_sizes(self, meta)

    def timeseries_stats(self, db: str, name: str) -> Optional[dict]:
        """collStats' `timeseries` section, or None when the namespace is not a time-series one."""
        if timeseries.timeseries_options(self.catalog.get(db, name)) is None:
            return None
        return timeseries.stats_section(self, db, name)

    def timeseries_info(self, meta: CollectionMeta, name_only: bool) -> Optional[dict]:
        """listCollections' entry when `meta` is a time-series namespace's, else None."""
        if timeseries.timeseries_options(meta) is None:
            return None
        return timeseries.collection_info(meta, name_only)

    def database_stats(self, db: str) -> dict:
        return database_sizes(self, db)

    def sample_documents(self, db: str, name: str, size: int) -> list[tuple[int, bytes]]:
        """Up to `size` (record id, BSON) pairs picked at random (all, in record order, when
        `size` covers the collection): random_sample.py."""
        from .random_sample import sample_records
        with self.reader() as reader:
            state = reader.catalog.collection(db, name)
            return [] if state is None else sample_records(reader, state, size)

    # ------------------------------------------------------------------ writes
    @waits_for_transactions
    def insert(self, db: str, coll: str, docs: list, ordered: bool = True,
               bypass_validation: bool = False, *, internal: bool = False) -> writes.WriteOutcome:
        try:
            return writes.insert(self, db, coll, docs, ordered, validator(bypass_validation), internal=internal,
                                 into=bulk_insert.insert_into, time_series_aside=True)
        except writes.TimeSeriesTarget as target:
            return timeseries.insert(self, db, coll, target.options, docs, ordered)

    @waits_for_transactions
    def update(self, db: str, coll: str, statements: list[writes.UpdateStatement],
               ordered: bool = True, bypass_validation: bool = False) -> writes.WriteOutcome:
        # the time-series check is made in the write batch, on the catalog it reads anyway
        try:
            return writes.update(self, db, coll, statements, ordered, validator(bypass_validation),
                                 timeseries=True)
        except writes.TimeSeriesNamespace as ts:
            return timeseries.update(self, db, coll, ts.options, statements, ordered)

    @waits_for_transactions
    def delete(self, db: str, coll: str, statements: list[writes.DeleteStatement],
               ordered: bool = True) -> writes.WriteOutcome:
        ts = timeseries.timeseries_options(self.catalog.get(db, coll))
        if ts is not None:
            return timeseries.delete(self, db, coll, ts, statements, ordered)
        return writes.delete(self, db, coll, statements, ordered)

    @waits_for_transactions
    def find_and_modify(self, db: str, coll: str, req: writes.FindAndModifyRequest,
                        bypass_validation: bool = False) -> dict:
        try:
            return writes.find_and_modify(self, db, coll, req, validator(bypass_validation), timeseries=True)
        except writes.TimeSeriesNamespace:
            from ..errors import CommandError, ErrorCode
            raise CommandError(ErrorCode.NotImplemented,
                               "findAndModify on a time-series collection is not supported by ginkgodb yet") from None

    # ------------------------------------------------------------------ reads
    def find(self, db: str, coll: str, req: FindRequest, ctx: Any = None, *,
             no_timeout: bool = False) -> ServerCursor:
        return reads.open_find(self, db, coll, req, ctx, no_timeout=no_timeout)

    def find_point(self, db: str, coll: str, req: FindRequest) -> Optional[reads.PointRead]:
        """A `{_id: v}` find's answer without a cursor, or None when it needs one (find)."""
        return reads.find_point(self, db, coll, req)

    def tail(self, db: str, coll: str, filt: dict, ctx: Any = None, *,
             await_data: bool = False, no_timeout: bool = False) -> TailableCursor:
        return reads.open_tailable(self, db, coll, filt, ctx, await_data=await_data, no_timeout=no_timeout)

    def apply_oplog(self, entries: list[bytes], logged: bool = True) -> Any:
        """A secondary applies a batch of the primary's oplog entries in one write batch; returns
        the last entry's ts (oplog_apply.py). `logged=False`: an initial sync's clone."""
        from .oplog_apply import apply_entries
        return apply_entries(self, entries, logged)

    def data_path(self) -> Optional[str]:
        """The data directory (None in memory)."""
        path = getattr(self.kv, "path", None)
        return path if isinstance(path, str) else None

    def roll_back_oplog(self, common: Any, restores: list, recreate: list | tuple = ()) -> int:
        """A former primary undoes its entries after `common` (oplog_apply.roll_back)."""
        from .oplog_apply import roll_back
        return roll_back(self, common, restores, recreate)

    def is_capped(self, db: str, coll: str) -> bool:
        meta = self.catalog.get(db, coll)
        return meta is not None and bool(meta.options.get("capped"))

    def count(self, db: str, coll: str, filt: Optional[dict], skip: int = 0, limit: int = 0,
              hint: Any = None, ctx: Any = None, collation: Optional[dict] = None) -> int:
        return reads.count(self, db, coll, filt, skip, limit, hint, ctx, collation)

    def distinct(self, db: str, coll: str, key: str, filt: Optional[dict], ctx: Any = None,
                 collation: Optional[dict] = None, hint: Any = None) -> list:
        return reads.distinct(self, db, coll, key, filt, ctx, collation, hint)

    @waits_for_transactions
    def aggregate(self, db: str, coll: Optional[str], pipeline: list, ctx: Any = None,
                  variables: Optional[dict] = None, collation: Optional[dict] = None,
                  sources: Optional[dict[str, Callable]] = None, hint: Any = None,
                  allow_disk_use: Optional[bool] = None) -> ServerCursor:
        """A cursor over the pipeline's results (`coll` None: `aggregate: 1`). `allow_disk_use`
        None: the server's allowDiskUseByDefault."""
        import bson
        from bson.raw_bson import RawBSONDocument
        collation_of(collation)  # a malformed collation fails before any work
        reader = self.reader()
        stats = PlanStats()
        docs = pipelines.run(self, db, coll, pipeline, ctx, variables, reader, sources=sources,
                             collation=collation, hint=hint, allow_disk_use=allow_disk_use, stats=stats)

        def encoded() -> Iterator[RawBSONDocument]:
            encode = bson.encode
            for d in docs:
                if isinstance(d, RawBSONDocument):
                    yield d
                    continue
                raw = encode(d)
                if len(raw) > MAX_INTERNAL_BSON_SIZE:
                    raise _too_large(len(raw), d)
                yield RawBSONDocument(raw)

        ns = f"{db}.{coll}" if coll is not None else f"{db}.$cmd.aggregate"
        return ServerCursor(ns, encoded(), reader, stats=stats)

    def change_stream(self, db: str, coll: Optional[str], spec: Any, stages: list, ctx: Any = None,
                      variables: Optional[dict] = None) -> ChangeStreamCursor:
        """A `$changeStream` cursor (`coll` None: a database, or with allChangesForCluster the
        deployment); `stages` are the pipeline's later stages. Not yet registered."""
        from ..query.pipeline import compile_pipeline
        from .change_stream import check_stages, parse_spec, scope_of
        check_stages(stages)
        parsed = parse_spec(spec)
        scope = scope_of(self, db, coll, parsed)
        pipeline = (compile_pipeline(stages, pipelines.pipeline_context(self, db, coll, variables, ctx))
                    if stages else None)
        ns = f"{db}.{coll}" if coll is not None else f"{db}.$cmd.aggregate"
        return ChangeStreamCursor(self, ns, scope, parsed, pipeline)

    # ------------------------------------------------------------------ explain
    def explain_find(self, db: str, coll: str, req: FindRequest, verbosity: str,
                     command: dict, ctx: Any = None) -> dict:
        if timeseries.timeseries_options(self.catalog.get(db, coll)) is not None:
            from .views import find_pipeline
            stages = find_pipeline(req.filter, req.sort, req.skip, req.limit, req.projection)
            return self.explain_aggregate(db, coll, stages, verbosity, command, ctx)
        return reads.explain_find(self, db, coll, req, verbosity, command, ctx)

    def explain_aggregate(self, db: str, coll: Optional[str], pipeline: list, verbosity: str,
                          command: dict, ctx: Any = None, hint: Any = None) -> dict:
        """The pushed-down find's plan, then the remaining stages as given."""
        ts = timeseries.timeseries_options(self.catalog.get(db, coll)) if coll is not None else None
        if ts is not None:  # the buckets' plan, then the unpack with the filter it absorbed
            assert coll is not None
            coll = timeseries.buckets_name(coll)
            pipeline = timeseries.optimize(timeseries.view_pipeline(ts) + list(pipeline))
            if isinstance(pipeline[0], dict) and "$match" in pipeline[0]:
                first, unpack, pipeline = pipeline[0], pipeline[1], pipeline[2:]
            else:
                first, unpack, pipeline = {"$match": {}}, pipeline[0], pipeline[1:]
            name = next(iter(unpack))
            if pipeline and "$match" in pipeline[0]:
                unpack = {name: {**unpack[name], "eventFilter": pipeline[0]["$match"]}}
                pipeline = pipeline[1:]
            pipeline = [first, unpack] + pipeline
        req, rest = pipelines.split_pushdown(pipeline)
        req.hint = hint
        inner = reads.explain_find(self, db, coll or "$cmd.aggregate", req, verbosity, command, ctx)
        if not rest:
            return inner
        stages = [{"$cursor": {k: v for k, v in inner.items() if k in ("queryPlanner", "executionStats")}}]
        stages += [dict(s) for s in rest]
        return {"explainVersion": "1", "stages": stages, "command": command}


def _too_large(size: int, doc: dict) -> Exception:
    """mongod's answer to a result document above the internal BSON limit (16 MiB + 16 KiB)."""
    from ..bsonutil.shell_format import format_element
    from ..errors import CommandError, ErrorCode
    first = next(iter(doc.items()), None)
    element = format_element(*first)[:100] if first is not None else "EOO"
    return CommandError(ErrorCode.BSONObjectTooLarge,
                        f"BSONObj size: {size} (0x{size:X}) is invalid. Size must be between 0 and "
                        f"{MAX_INTERNAL_BSON_SIZE}({MAX_INTERNAL_BSON_SIZE // (1024 * 1024)}MB) "
                        f"First element: {element}")
