"""What find and aggregate report to `$queryStats` (engine/query_stats.py): one execution per
command, its getMores added to the same execution. Cheap enough to stay on: one shape (nested
tuples), one dict lookup and a few additions per command (bench/results/advisor.md)."""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from .context import CommandContext


def _store(ctx: CommandContext) -> Any:
    engine = ctx.base_engine if ctx.base_engine is not None else ctx.engine
    stats = getattr(engine, "query_stats", None)
    return stats if stats is not None and stats.enabled else None


def note_first(ctx: CommandContext, cursor: Any, reply: dict, shape: Callable[[], tuple], started: int) -> None:
    """A find or aggregate ran its first batch (`started`: time.perf_counter_ns() at its start)."""
    stats = _store(ctx)
    if stats is None:
        return
    micros = (time.perf_counter_ns() - started) // 1000
    plan = cursor.stats
    keys = docs = 0
    summary = None
    if plan is not None:
        keys, docs, summary = plan.keys_examined, plan.docs_examined, plan.plan_summary
    entry = stats.record(shape(), micros, len(reply["cursor"]["firstBatch"]), keys, docs, summary)
    if reply["cursor"]["id"]:
        cursor.query_entry = (entry, keys, docs)


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
    stats.more(entry, (time.perf_counter_ns() - started) // 1000, returned, keys - keys_before, docs - docs_before)
    cursor.query_entry = (entry, keys, docs)
