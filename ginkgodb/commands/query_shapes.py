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


def note_first(ctx: CommandContext, cursor: Any, reply: dict, shape: Callable[[], tuple], started: int,
               filt: Any = None, layout: Any = None) -> None:
    """A find or aggregate ran its first batch (`started`: time.perf_counter_ns() at its start;
    `filt`: the filter a query analyzer samples; `layout`: a find's command, None for an
    aggregate): QueryStats.note_query records it. Statistics never fail the operation they
    describe (as the profiler)."""
    try:
        stats = ctx.base_engine.query_stats    # a handler runs with its base engine set (dispatch)
        if stats.enabled:
            stats.note_query(cursor, shape, started, filt, layout)
    except AttributeError:
        if getattr(ctx.base_engine, "query_stats", None) is not None:
            log.exception("cannot record the statistics of an operation")
    except Exception:
        log.exception("cannot record the statistics of an operation")


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


def note_write(ctx: CommandContext, kind: int, db: str, coll: Any, statements: Any, started: int) -> None:
    """An insert, update or delete command (`statements`: its UpdateStatements or
    DeleteStatements, whose filters a query analyzer samples). Never fails the write."""
    try:
        engine = ctx.base_engine
        stats = getattr(engine if engine is not None else ctx.engine, "query_stats", None)
        if stats is None or not stats.enabled:
            return
        ns = f"{db}.{coll}"
        stats.count_op(ns, kind, (time.perf_counter_ns() - started) // 1000)
        if stats.analyzers and ns in stats.analyzers:
            if kind == UPDATE:
                for st in statements:
                    stats.sample(ns, "update", st.q, st.u, st.multi)
            else:
                for st in statements:
                    stats.sample(ns, "delete", st.q, None, st.limit == 0)
    except Exception:
        log.exception("cannot record the statistics of an operation")


def note_sampled(ctx: CommandContext, command: str, db: str, coll: Any, filt: Any, update: Any = None) -> None:
    """count, distinct and findAndModify: what a query analyzer samples of them (mongod 7.0
    samples these beside find, aggregate, update and delete)."""
    stats = _store(ctx)
    if stats is None or not stats.analyzers:
        return
    ns = f"{db}.{coll}"
    if ns in stats.analyzers:
        try:
            stats.sample(ns, command, filt if filt is not None else {}, update, False)
        except Exception:
            log.exception("cannot sample a query")
