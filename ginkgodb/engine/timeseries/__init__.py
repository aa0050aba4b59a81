"""Time-series collections (docs/design/timeseries.md): a view-like namespace whose pipeline
unpacks the buckets stored in `system.buckets.<name>`.

The engine's operations call these when their target is a time-series namespace; everything
else (reads through the view, the buckets' indexes, their records) is the ordinary machinery.
"""
from __future__ import annotations

import datetime
from typing import Any, Optional

import bson

from ...errors import CommandError, ErrorCode
from ...query.pipeline.unpack_bucket import STAGE
from .. import ddl
from .. import plan_builder as Q
from ..records import delete_record
from . import stats
from .inserts import Router
from .options import buckets_name, check_create_options, timeseries_options
from .rewrite import optimize

__all__ = ["create", "insert", "delete", "update", "optimize", "timeseries_options", "buckets_name",
           "collection_info", "expire", "bucket_index_key", "user_index_key", "stats_section"]


def view_pipeline(ts: dict) -> list:
    spec: dict = {"timeField": ts["timeField"]}
    if "metaField" in ts:
        spec["metaField"] = ts["metaField"]
    spec["bucketMaxSpanSeconds"] = ts["bucketMaxSpanSeconds"]
    return [{STAGE: spec}]


def bucket_index_key(ts: dict, key: dict) -> dict:
    """A key on measurements as the key on buckets mongod builds: the metaField becomes `meta`,
    the timeField `control.min`/`control.max` (in the key's direction)."""
    time_field, meta_field = ts["timeField"], ts.get("metaField")
    out: dict = {}
    for path, direction in key.items():
        if meta_field is not None and (path == meta_field or path.startswith(meta_field + ".")):
            out["meta" + path[len(meta_field):]] = direction
        elif path == time_field and direction in (1, -1, 1.0, -1.0):
            first, second = ("min", "max") if direction > 0 else ("max", "min")
            out[f"control.{first}.{time_field}"] = direction
            out[f"control.{second}.{time_field}"] = direction
        else:
            raise CommandError(ErrorCode.NotImplemented,
                               "secondary indexes on time-series measurement fields other than the "
                               f"metaField and the timeField are not supported by ginkgodb yet: '{path}'")
    return out


def user_index_key(ts: dict, key: dict) -> Optional[dict]:
    """The key as listIndexes on the time-series namespace shows it (None: not expressible)."""
    time_field, meta_field = ts["timeField"], ts.get("metaField")
    out: dict = {}
    skip = False
    for path, direction in key.items():
        if skip:
            skip = False
            continue
        if path == "meta" or path.startswith("meta."):
            if meta_field is None:
                return None
            out[meta_field + path[4:]] = direction
        elif path in (f"control.min.{time_field}", f"control.max.{time_field}"):
            out[time_field] = direction
            skip = True
        else:
            return None
    return out


def default_index_name(ts: dict) -> str:
    return f"{ts['metaField']}_1_{ts['timeField']}_1"


def create(batch: Any, db: str, name: str, options: dict) -> None:
    """The namespace's entry and its buckets collection (with mongod 6.3+'s default
    `{metaField: 1, timeField: 1}` index when there is a metaField), in one batch."""
    checked = check_create_options(options)
    ts = checked["timeseries"]
    if batch.catalog.get(db, name) is not None:
        raise CommandError(ErrorCode.NamespaceExists, f"Collection {db}.{name} already exists.")
    buckets = buckets_name(name)
    if batch.catalog.get(db, buckets) is not None:
        raise CommandError(ErrorCode.NamespaceExists, f"Collection {db}.{buckets} already exists.")
    # expireAfterSeconds stays on the namespace's entry: the buckets' TTL is the time-series pass
    bucket_options = {"timeseries": ts}
    ddl.create_collection(batch, db, buckets, bucket_options, implicit=True)
    view = {"viewOn": buckets, "pipeline": view_pipeline(ts), **checked}
    ddl.create_collection(batch, db, name, view)
    if "metaField" in ts:
        coll = batch.collection(db, buckets)
        key = bucket_index_key(ts, {ts["metaField"]: 1, ts["timeField"]: 1})
        ddl.create_indexes(batch, coll, [{"key": key, "name": default_index_name(ts)}])


def _refuse_in_transaction(batch: Any, what: str, ns: str) -> None:
    """mongod writes time-series buckets outside transactions only (reads inside are fine)."""
    if batch.in_transaction:
        raise CommandError(ErrorCode.OperationNotSupportedInTransaction,
                           f"Cannot {what} a time-series collection in a multi-document transaction: {ns}")


def modify(batch: Any, db: str, name: str, change: Any) -> None:
    """collMod `{timeseries: {granularity}}`: seconds -> minutes -> hours only, as mongod; the
    namespace's entry, its pipeline and the buckets' options change together. Buckets already
    stored keep their shorter span, which the new, longer one bounds too."""
    from .options import GRANULARITIES, SPANS
    meta = batch.catalog.get(db, name)
    if meta is None:
        raise CommandError(ErrorCode.NamespaceNotFound, f"ns does not exist: {db}.{name}")
    ts = timeseries_options(meta)
    if ts is None:
        raise CommandError(ErrorCode.InvalidOptions,
                           "option only supported on a time-series collection: timeseries")
    if not isinstance(change, dict):
        raise CommandError(ErrorCode.TypeMismatch, "BSON field 'collMod.timeseries' is the wrong type, "
                                                   "expected type 'object'")
    for key in change:
        if key in ("bucketMaxSpanSeconds", "bucketRoundingSeconds"):
            raise CommandError(ErrorCode.NotImplemented, f"collMod of timeseries.{key} is not supported by "
                                                         "ginkgodb yet")
        if key != "granularity":
            raise CommandError(ErrorCode.IDLUnknownField, f"BSON field 'collMod.timeseries.{key}' is an unknown field.")
    target = change.get("granularity")
    if target is None:
        raise CommandError(ErrorCode.InvalidOptions, "No timeseries parameters were given")
    if target not in GRANULARITIES:
        raise CommandError(ErrorCode.BadValue, f"Enumeration value '{target}' for field "
                                               "'collMod.timeseries.granularity' is not a valid value.")
    current = ts.get("granularity")
    if current is None:
        raise CommandError(ErrorCode.InvalidOptions,
                           "Cannot change the granularity of a time-series collection with custom bucketing "
                           "parameters")
    if GRANULARITIES.index(target) < GRANULARITIES.index(current):
        raise CommandError(ErrorCode.InvalidOptions,
                           "Invalid transition for timeseries.granularity. Can only transition from 'seconds' "
                           "to 'minutes' or 'minutes' to 'hours'.")
    if target == current:
        return
    span, rounding = SPANS[target]
    new = {**ts, "granularity": target, "bucketRoundingSeconds": rounding, "bucketMaxSpanSeconds": span}
    ddl.modify_collection(batch, meta, {"timeseries": new, "pipeline": view_pipeline(new)})
    buckets = batch.catalog.get(db, buckets_name(name))
    if buckets is not None:
        ddl.modify_collection(batch, buckets, {"timeseries": new})


def insert(engine: Any, db: str, name: str, ts: dict, docs: list, ordered: bool) -> Any:
    from ..writes import WriteOutcome, _run_batch
    out = WriteOutcome()
    with engine.write() as batch:
        _refuse_in_transaction(batch, "insert into", f"{db}.{name}")
        batch.result = out
        router = Router(engine, batch, db, name, ts)

        def one(i: int, doc: Any) -> None:
            router.add(doc)
            out.n += 1

        _run_batch(docs, ordered, one, out)
        delta = router.flush()
    stats.add(engine, f"{db}.{name}", delta)
    return out


def delete(engine: Any, db: str, name: str, ts: dict, statements: list, ordered: bool) -> Any:
    from ..writes import WriteOutcome, _run_batch
    from .writes import delete as delete_one_statement
    out = WriteOutcome()
    with engine.write(reclaims=True) as batch:
        _refuse_in_transaction(batch, "delete from", f"{db}.{name}")
        batch.result = out

        def one(i: int, st: Any) -> None:
            out.n += delete_one_statement(engine, batch, db, name, ts, st)

        _run_batch(statements, ordered, one, out)
    return out


def update(engine: Any, db: str, name: str, ts: dict, statements: list, ordered: bool) -> Any:
    from ..writes import WriteOutcome, _run_batch
    from .writes import update as update_one_statement
    out = WriteOutcome()
    with engine.write() as batch:
        _refuse_in_transaction(batch, "update", f"{db}.{name}")
        batch.result = out

        def one(i: int, st: Any) -> None:
            matched, modified = update_one_statement(engine, batch, db, name, ts, st)
            out.n += matched
            out.n_modified += modified

        _run_batch(statements, ordered, one, out)
    return out


def collection_info(meta: Any, name_only: bool) -> dict:
    """listCollections' entry for a time-series namespace."""
    if name_only:
        return {"name": meta.name, "type": "timeseries"}
    options = {k: meta.options[k] for k in ("timeseries", "expireAfterSeconds") if k in meta.options}
    return {"name": meta.name, "type": "timeseries", "options": options, "info": {"readOnly": False}}


def stats_section(engine: Any, db: str, name: str) -> dict:
    from ..batch import read_numbers
    buckets = buckets_name(name)
    meta = engine.catalog.get(db, buckets)
    count = 0
    if meta is not None:
        with engine.reader() as reader:
            count = read_numbers(reader.txn, meta.id).count
    return stats.section(engine, f"{db}.{name}", f"{db}.{buckets}", count)


def expire(engine: Any, now: datetime.datetime) -> int:
    """The TTL pass for time-series collections: whole buckets whose newest measurement
    (control.max.<time>) is older than expireAfterSeconds are deleted, as mongod does."""
    deleted = 0
    for meta in list(engine.catalog.all()):
        ts = timeseries_options(meta)
        if ts is None or "expireAfterSeconds" not in meta.options:
            continue
        cutoff = now - datetime.timedelta(seconds=float(meta.options["expireAfterSeconds"]))
        with engine.write(reclaims=True) as batch:
            state = batch.collection(meta.db, buckets_name(meta.name))
            if state is None:
                continue
            req = Q.FindRequest(filter={f"control.max.{ts['timeField']}": {"$lt": cutoff}})
            built = Q.build(state, engine.reader(batch.txn), req, for_write=True)
            rows = [(rid, raw if raw is not None else bson.encode(doc), doc if doc is not None else bson.decode(raw))
                    for rid, raw, doc in built.root.rows()]
            for rid, raw, doc in rows:
                delete_record(batch, state, rid, doc, raw)
                deleted += 1
    return deleted


def forget(engine: Any, db: str, name: str) -> None:
    stats.forget(engine, f"{db}.{name}")


