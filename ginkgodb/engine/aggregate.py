"""aggregate: leading $match/$sort/$skip/$limit run through the planner, the rest in query.pipeline.

Stages that need the engine itself ($collStats, $indexStats, $out, $merge) are handled here; every
other stage belongs to `query.pipeline`.
"""
from __future__ import annotations

import datetime
from collections.abc import Iterator
from typing import Any, Optional

import bson

from ..bsonutil import keycodec
from ..bsonutil.types import type_name
from ..errors import CommandError, ErrorCode
from ..query import metadata
from ..query.external_sort import Spill
from . import plan_builder as Q
from .batch import read_numbers
from .ddl import ensure_collection
from .documents import prepare_insert
from .records import delete_record, insert_record

SOURCE_STAGES = ("$collStats", "$indexStats", "$documents", "$currentOp", "$listLocalSessions",
                 "$listSessions", "$changeStream", "$queryStats", "$planCacheStats")


def pipeline_context(engine, db: str, coll: Optional[str], variables: Optional[dict], ctx=None,
                     allow_disk_use: Optional[bool] = None):
    """The pipeline's view of the engine: other collections' documents ($lookup, ...), `let`,
    and where its blocking stages may spill (allowDiskUse, the data directory's `_tmp`)."""
    from ..query.pipeline import PipelineContext

    def source(src_db: str, src_coll: str, filter: Optional[dict] = None) -> Iterator[dict]:
        return _docs(engine, src_db, src_coll, Q.FindRequest(filter=filter or {}), ctx)

    return PipelineContext(db=db, variables=dict(variables or {}), source=source, collection=coll,
                           spill=Spill.for_request(allow_disk_use, engine.temp_dir()))


def _docs(engine, db: str, coll: str, req: Q.FindRequest, ctx, reader=None, stats=None) -> Iterator[dict]:
    """The documents of a collection matching `req` (none when it does not exist). With the
    cursor's `reader`, the query is planned now, so a bad filter or hint fails the command
    before any batch (even with batchSize 0); alone, it runs on its own reader when iterated."""
    if reader is None:
        return _docs_on_own_reader(engine, db, coll, req, ctx)
    with reader:
        built = _plan(reader, db, coll, req, ctx)
    if stats is not None:
        stats.built = built
    return _rows(built) if built is not None else iter(())


def _docs_on_own_reader(engine, db: str, coll: str, req: Q.FindRequest, ctx) -> Iterator[dict]:
    with engine.reader() as reader:
        built = _plan(reader, db, coll, req, ctx)
        if built is not None:
            yield from _rows(built)


def _plan(reader, db: str, coll: str, req: Q.FindRequest, ctx) -> Optional[Q.BuiltPlan]:
    state = reader.catalog.collection(db, coll)
    if state is None:
        if req.filter:
            Q.build(None, None, req)  # the filter's errors ($text: 27)
        return None
    return Q.build(state, reader, req, ctx)


def _rows(built: Q.BuiltPlan) -> Iterator[dict]:
    decode = bson.decode
    for _, raw, doc in built.root.rows():
        yield doc if doc is not None else decode(raw)


def split_pushdown(pipeline: list) -> tuple[Q.FindRequest, list]:
    """Move leading $match (merged), then $sort, $skip, $limit into a find request (or a
    leading $geoNear, which becomes a near query)."""
    req = Q.FindRequest()
    if pipeline and _stage_name(pipeline[0]) == "$geoNear":
        from .geo_near import parse_geo_near_stage
        req.geo_near = parse_geo_near_stage(pipeline[0]["$geoNear"])
        rest = pipeline[1:]
        if rest and _stage_name(rest[0]) == "$limit" and _count(rest[0]["$limit"]):
            req.limit = int(rest[0]["$limit"])   # the near search stops after that many
            rest = rest[1:]
        req.near_metadata = metadata.mentions(rest, metadata.GEO_NEAR)  # carried as in a find
        return req, rest
    filters = []
    i = 0
    while i < len(pipeline) and _stage_name(pipeline[i]) == "$match" and _plain_match(pipeline[i]["$match"], i == 0):
        filters.append(pipeline[i]["$match"])
        i += 1
    if filters:
        req.filter = filters[0] if len(filters) == 1 else {"$and": filters}
    if i < len(pipeline) and _stage_name(pipeline[i]) == "$sort" and isinstance(pipeline[i]["$sort"], dict):
        sort = pipeline[i]["$sort"]
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in sort.values()):
            req.sort = sort
            i += 1
            if i < len(pipeline) and _stage_name(pipeline[i]) == "$limit" and _count(pipeline[i]["$limit"]):
                req.limit = int(pipeline[i]["$limit"])
                i += 1
    rest = pipeline[i:]
    if rest and metadata.has_text(req.filter) and metadata.mentions(rest):
        req.text_score = True  # the rest reads {$meta: "textScore"}: TEXT_OR keeps the scores
    return req, rest


def _count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v > 0


def _plain_match(spec: Any, first: bool = False) -> bool:
    """$match specs the find planner can take ($text only in the first stage, where the planner
    answers it from the text index; $where stays in the pipeline, whose $match refuses it)."""
    return isinstance(spec, dict) and (first or "$text" not in spec) and not _mentions_where(spec)


def _mentions_where(spec: Any) -> bool:
    if isinstance(spec, dict):
        return any(k == "$where" or _mentions_where(v) for k, v in spec.items())
    if isinstance(spec, list):
        return any(_mentions_where(v) for v in spec)
    return False


def _stage_name(stage: Any) -> Optional[str]:
    if isinstance(stage, dict) and len(stage) == 1:
        return next(iter(stage))
    return None


def run(engine, db: str, coll: Optional[str], pipeline: list, ctx=None, variables: Optional[dict] = None,
        reader=None, sources: Optional[dict] = None, collation: Optional[dict] = None,
        hint: Any = None, allow_disk_use: Optional[bool] = None, stats=None) -> Iterator[dict]:
    """Documents out of the pipeline (decoded). `coll` None is `aggregate: 1`.

    `sources` maps first-stage names the front end answers (e.g. `$currentOp`, which only the
    server knows) to callables taking the stage's spec and returning documents. `stats` (a
    cursors.PlanStats) is given the pushed-down find's plan."""
    from ..query.pipeline import run_pipeline
    from ..query.pipeline.core import FIRST_ONLY
    from .views import resolve
    for stage in pipeline[1:]:   # checked here: the planner takes leading stages away
        name = _stage_name(stage)
        if name in FIRST_ONLY:
            raise CommandError(ErrorCode.StageOnlyValidFirst, f"{name} is only valid as the first stage in a pipeline")
    view = resolve(engine.catalog, db, coll) if coll is not None else None
    if view is not None and pipeline and _stage_name(pipeline[0]) == "$collStats" and _is_timeseries(engine, db, coll):
        view = None  # a time-series namespace's own statistics (its buckets')
    if view is not None:
        from .timeseries.rewrite import optimize  # a time-series view: bucket-level predicates first
        coll, pipeline = view[0], optimize(view[1] + list(pipeline))
    pctx = pipeline_context(engine, db, coll, variables, ctx, allow_disk_use)
    out_stage = None
    if pipeline and _stage_name(pipeline[-1]) in ("$out", "$merge"):
        out_stage, pipeline = pipeline[-1], pipeline[:-1]
        out_target(db, out_stage)  # a forbidden target fails before any document is read
    first = _stage_name(pipeline[0]) if pipeline else None
    if sources and first in sources:
        source = iter(sources[first](pipeline[0][first]))
        docs = run_pipeline(pipeline[1:], source, pctx)
    elif first in SOURCE_STAGES and first not in ("$documents",):
        source = _source_stage(engine, db, coll, pipeline[0])
        docs = run_pipeline(pipeline[1:], source, pctx)
    elif coll is None:
        docs = run_pipeline(pipeline, iter(()), pctx)
    elif first == "$sample" and (picked := _random_sample(engine, db, coll, pipeline[0]["$sample"])) is not None:
        docs = run_pipeline(pipeline[1:], iter(picked), pctx)
    else:
        _check_text_first(pipeline)
        req, rest = split_pushdown(pipeline)
        req.variables = variables
        req.collation = collation  # applies to the leading $match/$sort the planner runs
        req.hint = hint
        req.allow_disk_use, req.temp_dir = allow_disk_use, engine.temp_dir()
        if req.text_score or req.near_metadata:  # the documents carry their metadata through the pipeline
            source = _docs(engine, db, coll, req, ctx, reader, stats)
            with metadata.providing(*((metadata.TEXT_SCORE,) if req.text_score else metadata.GEO_NEAR)):
                docs = run_pipeline(rest, source, pctx)
            docs = (metadata.strip(d) for d in docs)
        else:
            source = _docs(engine, db, coll, req, ctx, reader, stats)
            with metadata.for_filter(req.filter if req.geo_near is None else None):
                docs = run_pipeline(rest, source, pctx) if rest else source
    if out_stage is not None:
        write_out(engine, db, out_stage, docs, variables)
        return iter(())
    return docs


def _check_text_first(pipeline: list) -> None:
    """$text only in the first stage (checked here: the planner takes leading $matches away,
    so the pipeline would see a later one first)."""
    for stage in pipeline[1:]:
        if _stage_name(stage) == "$match" and metadata.has_text(stage["$match"]):
            raise CommandError(ErrorCode.MatchTextNotFirstStage,
                               "$match with $text is only allowed as the first pipeline stage")


def _random_sample(engine, db: str, coll: str, spec: Any) -> Optional[list]:
    """A leading `{$sample: {size: n}}` under 5% of the collection, answered by random seeks
    (random_sample.py) as mongod's random cursor; None: the stage reads everything."""
    if not isinstance(spec, dict) or list(spec) != ["size"]:
        return None
    size = spec["size"]
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        return None
    from .random_sample import sample_records, uses_random_cursor
    with engine.reader() as reader:
        state = reader.catalog.collection(db, coll)
        if state is None or not uses_random_cursor(size, read_numbers(reader.txn, state.meta.id).count):
            return None
        records = sample_records(reader, state, size)
    decode = bson.decode
    return [decode(raw) for _, raw in records]


def _source_stage(engine, db: str, coll: Optional[str], stage: dict) -> Iterator[dict]:
    name, spec = next(iter(stage.items()))
    if name == "$collStats":
        return iter([_coll_stats(engine, db, coll, spec)])
    if name == "$indexStats":
        state = engine.collection(db, coll) if coll else None
        metas = state.meta.indexes if state is not None else []
        usage = getattr(engine, "index_usage", None)
        from .text_build import progress
        return iter([{"name": ix.name, "key": dict(ix.key), "host": "localhost",
                      "accesses": usage.accesses(ix.id) if usage is not None
                      else {"ops": 0, "since": datetime.datetime.utcnow()},
                      "spec": ix.spec(), **(progress(ix) or {})} for ix in metas])
    if name == "$planCacheStats":
        if not isinstance(spec, dict):
            raise CommandError(ErrorCode.FailedToParse, "$planCacheStats value must be an object. Found: "
                                                        + type_name(spec))
        for field in spec:
            if field != "allHosts":
                raise CommandError(ErrorCode.FailedToParse, f"unrecognized option '{field}' in $planCacheStats stage")
        return iter(engine.plan_cache_entries(db, coll) if coll else [])
    if name == "$queryStats":
        from .query_stats import query_stats_stage
        return query_stats_stage(engine, db, spec)
    if name in ("$listLocalSessions", "$listSessions"):
        return iter([engine.sessions.describe(s) for s in engine.sessions.all()])
    if name == "$currentOp":
        return iter(())  # no other operations or cached sessions are visible to an aggregate here
    raise CommandError(ErrorCode.NotImplemented, f"{name} is not supported by ginkgodb yet")


def _is_timeseries(engine, db: str, coll: Optional[str]) -> bool:
    from .timeseries.options import timeseries_options
    return coll is not None and timeseries_options(engine.catalog.get(db, coll)) is not None


def _coll_stats(engine, db: str, coll: Optional[str], spec: dict) -> dict:
    from .stats import collection_sizes
    meta = engine.catalog.get(db, coll) if coll else None
    if meta is None:
        raise CommandError(ErrorCode.NamespaceNotFound, f"Collection [{db}.{coll}] not found.")
    out: dict = {"ns": meta.ns, "host": "localhost",
                 "localTime": datetime.datetime.now(datetime.UTC).replace(tzinfo=None)}
    series = None
    if _is_timeseries(engine, db, coll):
        from .timeseries import buckets_name, stats_section
        assert coll is not None
        series = stats_section(engine, db, coll)
        meta = engine.catalog.get(db, buckets_name(coll)) or meta
    s = collection_sizes(engine, meta)
    if isinstance(spec, dict) and "storageStats" in spec:
        scale = (spec["storageStats"] or {}).get("scale", 1) or 1
        out["storageStats"] = {
            "size": s.data_size // scale, "count": s.count,
            "avgObjSize": s.data_size // s.count if s.count else 0, "numOrphanDocs": 0,
            "storageSize": s.storage_size // scale, "freeStorageSize": 0,
            "capped": bool(meta.options.get("capped")), "nindexes": len(meta.indexes),
            "indexBuilds": [], "totalIndexSize": s.total_index_size // scale,
            "totalSize": (s.storage_size + s.total_index_size) // scale,
            "indexSizes": {k: v // scale for k, v in s.index_sizes.items()}, "scaleFactor": scale}
        if s.capped_max_size is not None:
            out["storageStats"]["max"] = s.capped_max_docs
            out["storageStats"]["maxSize"] = s.capped_max_size // scale
        if series is not None:
            out["storageStats"]["timeseries"] = series
    if isinstance(spec, dict) and "count" in spec:
        out["count"] = s.count
    return out


_INTERNAL_DATABASES = frozenset({"admin", "config", "local"})


def out_target(db: str, stage: dict) -> tuple[str, str]:
    """The (database, collection) a $out or $merge stage writes to, refused as mongod refuses it
    when it is a system collection or an internal database (checked before the pipeline runs)."""
    name, spec = next(iter(stage.items()))
    target_db, target = db, spec
    if isinstance(spec, dict):
        target_db = spec.get("db", db)
        target = spec.get("coll") if name == "$out" else spec.get("into")
        if isinstance(target, dict):
            target_db, target = target.get("db", db), target.get("coll")
    if not isinstance(target, str):
        raise CommandError(ErrorCode.FailedToParse, f"{name} requires a target collection name")
    if name == "$out":
        if target.startswith("system."):
            raise CommandError(ErrorCode.OutToSpecialCollection, f"Can't $out to special collection: {target}")
        if target_db in _INTERNAL_DATABASES:
            raise CommandError(ErrorCode.OutToInternalDatabase, f"Can't $out to internal database: {target_db}")
    else:
        if target.startswith("system."):
            raise CommandError(ErrorCode.MergeToSpecialCollection,
                               f"Cannot $merge to special collection: {target}")
        if target_db in _INTERNAL_DATABASES:
            raise CommandError(ErrorCode.MergeToInternalDatabase,
                               f"Cannot $merge to internal database: {target_db}")
    return target_db, target


def write_out(engine, db: str, stage: dict, docs: Iterator[dict], variables: Optional[dict] = None) -> None:
    """$out replaces the target collection's documents; $merge combines by `on` (default _id)."""
    name, spec = next(iter(stage.items()))
    options: dict = spec if isinstance(spec, dict) else {}
    target_db, target = out_target(db, stage)
    results = list(docs)
    with engine.write() as batch:
        state = ensure_collection(batch, target_db, target)
        if name == "$out":
            for rid, raw, doc in list(_all_rows(engine, batch, state)):
                delete_record(batch, state, rid, doc, raw)
            for doc in results:
                d, raw = prepare_insert(doc)
                insert_record(batch, batch.collection(target_db, target), d, raw)
            return
        merger = _Merger(engine, batch, target_db, target, options, variables)
        for doc in results:
            merger.merge(doc)


class _Merger:
    """One $merge: documents matched on `on` fields, then whenMatched / whenNotMatched."""

    def __init__(self, engine, batch, db: str, coll: str, options: dict, variables: Optional[dict] = None) -> None:
        self.engine, self.batch, self.db, self.coll = engine, batch, db, coll
        self.variables = dict(variables or {})   # the command's let
        on = options.get("on", "_id")
        self.on = [on] if isinstance(on, str) else list(on)
        self.when_matched = options.get("whenMatched", "merge")
        self.when_not_matched = options.get("whenNotMatched", "insert")
        if self.when_matched not in ("replace", "keepExisting", "merge", "fail") and not isinstance(
                self.when_matched, list):
            raise CommandError(ErrorCode.BadValue, f"Enumeration value '{self.when_matched}' for field "
                                                   "'$merge.whenMatched' is not a valid value.")
        if self.when_not_matched not in ("insert", "discard", "fail"):
            raise CommandError(ErrorCode.BadValue, f"Enumeration value '{self.when_not_matched}' for field "
                                                   "'$merge.whenNotMatched' is not a valid value.")
        self.let = self._let(options)

    def _let(self, options: dict) -> dict:
        """The stage's `let`, compiled: evaluated against each incoming document for the
        whenMatched pipeline; `new` (the incoming document) unless `let` names it."""
        from ..query.expr import compile_expr
        spec = options.get("let")
        if spec is None:
            return {}
        if not isinstance(self.when_matched, list):
            raise CommandError(ErrorCode.MergeLetWithoutPipeline,
                               f"Cannot use 'let' variables with 'whenMatched: {self.when_matched}' mode")
        if not isinstance(spec, dict):
            raise CommandError(ErrorCode.TypeMismatch, "BSON field '$merge.let' is the wrong type "
                                                       f"'{type_name(spec)}', expected type 'object'")
        return {name: compile_expr(expr) for name, expr in spec.items()}

    def _pipeline_variables(self, doc: dict) -> dict:
        bound = dict(self.variables)
        bound["new"] = doc
        for name, expr in self.let.items():
            bound[name] = expr(doc, self.variables)
        return bound

    def merge(self, doc: dict) -> None:
        from .records import update_record
        engine, batch = self.engine, self.batch
        state = batch.collection(self.db, self.coll)
        query = {f: doc.get(f) for f in self.on}
        built = Q.build(state, engine.reader(batch.txn), Q.FindRequest(filter=query, limit=1), for_write=True)
        for rid, raw, old in built.root.rows():
            old = old if old is not None else bson.decode(raw)
            if self.when_matched == "fail":
                raise state.id_index.duplicate_error(keycodec.encode_key((old["_id"],)), old)
            if self.when_matched == "keepExisting":
                return
            if isinstance(self.when_matched, list):
                from ..query.update import compile_update
                new = compile_update(self.when_matched, variables=self._pipeline_variables(doc)).apply(old)
            elif self.when_matched == "replace":
                new = {**doc, "_id": old["_id"]}
            else:
                new = {**old, **doc}
            # the oplog logs whenMatched: replace as the document, the others as a diff
            kind = ("pipeline" if isinstance(self.when_matched, list)
                    else "replace" if self.when_matched == "replace" else "update")
            update_record(batch, state, rid, old, raw, new, kind)
            return
        if self.when_not_matched == "discard":
            return
        if self.when_not_matched == "fail":
            raise CommandError(ErrorCode.MergeStageNoMatchingDocument,
                               "$merge could not find a matching document in the target collection "
                               "for at least one document in the source collection")
        d, raw = prepare_insert(doc)
        insert_record(batch, state, d, raw)


def _all_rows(engine, batch, state):
    built = Q.build(state, engine.reader(batch.txn), Q.FindRequest(), for_write=True)
    for rid, raw, doc in built.root.rows():
        yield rid, raw, doc if doc is not None else bson.decode(raw)
