"""Bringing the main collection to a known state: loading documents and building its indexes.

Used by W1/W3 (timed) and as untimed setup when a selected workload needs data or indexes that
W1/W3 did not provide.
"""
from __future__ import annotations

import time

import bson

from ..timing import Sample
from .base import Context

BATCH = 1_000
INDEXES = (("k", False), ("sku", True))  # (field, unique)


def load_documents(ctx: Context, budget: float) -> Sample:
    """Insert all n documents with insert_many in batches; time the batches within `budget`.

    Later batches are still inserted (untimed) so every later workload sees the full data set.
    Only insert_many calls are timed, never document generation.
    """
    coll, check, clock = ctx.coll, ctx.check, time.perf_counter
    ops = 0
    units = seconds = 0.0
    encode = bson.encode
    for batch in ctx.ds.batches(BATCH):
        ctx.bson_bytes += sum(len(encode(d)) for d in batch)
        start = clock()
        result = coll.insert_many(batch)
        elapsed = clock() - start
        if seconds < budget:
            ops += 1
            units += len(batch)
            seconds += elapsed
        check.equal(len(result.inserted_ids), len(batch), "inserted_ids per batch")
    ctx.data_ready = True
    ctx.count = ctx.ds.n
    check.equal(coll.count_documents({}), ctx.ds.n, "count after loading")
    return Sample(ops, units, seconds)


def build_indexes(ctx: Context) -> Sample:
    """create_index on `k` (int) and unique `sku` (string), timed; checks the unique one works.

    Each index that gets built is recorded at once, so a target that builds `k` but rejects
    `unique=True` still serves the `k` workloads from an index.
    """
    coll, clock = ctx.coll, time.perf_counter
    ctx.index_attempted = True
    seconds = 0.0
    for field, unique in INDEXES:
        start = clock()
        coll.create_index(field, unique=True) if unique else coll.create_index(field)
        seconds += clock() - start
        ctx.indexed_fields.add(field)
    _check_unique_enforced(ctx)
    _check_index_information(ctx)
    return Sample(len(INDEXES), len(INDEXES) * ctx.count, seconds)


def _check_unique_enforced(ctx: Context) -> None:
    """A unique index that accepts a duplicate is a wrong answer, however fast it was built."""
    dup = {"_id": bson.ObjectId(), "sku": ctx.ds.sku(0)}
    try:
        ctx.coll.insert_one(dup)
    except Exception as exc:  # noqa: BLE001 - any engine's duplicate-key exception
        ctx.check.expect("duplicate" in f"{type(exc).__name__} {exc}".lower(),
                         "duplicate sku rejected with an unexpected error", repr(exc))
        return
    ctx.check.expect(False, "duplicate sku accepted by the unique index")
    ctx.coll.delete_many({"_id": dup["_id"]})  # delete_one is broken on montydb's LMDB storage


def _check_index_information(ctx: Context) -> None:
    try:
        info = ctx.coll.index_information()
    except (NotImplementedError, AttributeError) as exc:
        ctx.notes.append(f"index_information: {type(exc).__name__}")
        return
    keys = {_key_field(spec): spec for spec in info.values()}
    for field, unique in INDEXES:
        spec = keys.get(field)
        if ctx.check.expect(spec is not None, f"index on {field} missing from index_information",
                            sorted(info)) and unique:
            ctx.check.expect(bool(spec.get("unique")), f"index on {field} not reported unique", spec)


def _key_field(spec: dict) -> str | None:
    key = spec.get("key")
    if isinstance(key, dict):
        key = list(key.items())
    if isinstance(key, (list, tuple)) and len(key) == 1:
        first = key[0]
        return first[0] if isinstance(first, (list, tuple)) else first
    return None
