"""What find and aggregate report to `$queryStats` (engine/query_stats.py): one execution per
command, its getMores added to the same execution. Cheap enough to stay on: one shape (nested
tuples), one dict lookup and a few additions per command (bench/results/advisor.md)."""
from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

from .context import CommandContext

log = logging.getLogger("ginkgodb.query_stats")
F = TypeVar("F", bound=Callable[..., None])


def _never_fails(fn: F) -> F:
    """Statistics never fail the operation they describe (as the profiler)."""
    @functools.wraps(fn)
    def wrapper(*args: Any) -> None:
        try:
            fn(*args)
        except Exception:
            log.exception("cannot record the statistics of an operation")
    return wrapper  # type: ignore[return-value]


def _store(ctx: CommandContext) -> Any:
    engine = ctx.base_engine if ctx.base_engine is not None else ctx.engine
    stats = getattr(engine, "query_stats", None)
    return stats if stats is not None and stats.enabled else None


#: indexes into engine.query_stats.TOP_KINDS
QUERIES, GETMORE, INSERT, UPDATE, REMOVE, COMMANDS = range(6)


@_never_fails
def note_first(ctx: CommandContext, cursor: Any, reply: dict, shape: Callable[[], tuple], started: int,
               filt: Any = None) -> None:
    """A find or aggregate ran its first batch (`started`: time.perf_counter_ns() at its start;
    `filt`: the filter a query analyzer samples)."""
    engine = ctx.base_engine if ctx.base_engine is not None else ctx.engine
    stats = getattr(engine, "query_stats", None)
    if stats is None or not stats.enabled:
        return
    micros = (time.perf_counter_ns() - started) // 1000
    ns = cursor.ns
    row = stats.top.get(ns)
    if row is None:
        stats.count_op(ns, QUERIES, micros)
    else:
        cell = row[QUERIES]
        cell[0] += micros
        cell[1] += 1
    if stats.analyzers:
        stats.sample(ns, "find" if filt is not None else "aggregate", filt if filt is not None else {})
    plan = cursor.stats
    if plan is None:
        keys = docs = 0
        chosen = None
    else:
        keys, docs = plan.keys_examined, plan.docs_examined
        chosen = getattr(plan, "plan", None)   # a BuiltPlan's QueryPlan (its planSummary is made when read)
        if chosen is None:
            built = getattr(plan, "built", None)   # or what holds one
            chosen = built.plan if built is not None else None
    entry = stats.record(shape(), micros, len(reply["cursor"]["firstBatch"]), keys, docs, chosen)
    if reply["cursor"]["id"]:
        cursor.query_entry = (entry, keys, docs)


@_never_fails
def note_more(ctx: CommandContext, cursor: Any, returned: int, started: int) -> None:
    """A getMore of a cursor whose first batch was counted."""
    held = getattr(cursor, "query_entry", None)
    stats = _store(ctx)
    if held is None or stats is None:
        return
    entry, keys_before, docs_before = held
    plan = cursor.stats
    keys = plan.keys_examined if plan is not None else 0
    docs = plan.docs_examined if plan is not None else 0
    micros = (time.perf_counter_ns() - started) // 1000
    stats.more(entry, micros, returned, keys - keys_before, docs - docs_before)
    stats.count_op(cursor.ns, GETMORE, micros)
    cursor.query_entry = (entry, keys, docs)


@_never_fails
def note_write(ctx: CommandContext, kind: int, db: str, coll: Any, filters: Any, started: int) -> None:
    """An insert, update or delete command (`filters`: its statements' (filter, update, multi),
    for a query analyzer)."""
    stats = _store(ctx)
    if stats is None:
        return
    ns = f"{db}.{coll}"
    stats.count_op(ns, kind, (time.perf_counter_ns() - started) // 1000)
    if stats.analyzers and ns in stats.analyzers:
        name = "update" if kind == UPDATE else "delete"
        for f, update, multi in filters:
            stats.sample(ns, name, f, update, multi)
