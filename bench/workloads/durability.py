"""W13: close, reopen and count (durable targets only)."""
from __future__ import annotations

from ..timing import Sample, timed
from .base import DB_NAME, MAIN, Context, workload


@workload("W13", "close, reopen, count", "reopens/s", durable_only=True)
def reopen_and_count(ctx: Context) -> Sample:
    def op() -> int:
        client = ctx.target.reopen()
        ctx.check.equal(client[DB_NAME][MAIN].count_documents({}), ctx.count, "count after reopen")
        return 1

    return timed(op)
