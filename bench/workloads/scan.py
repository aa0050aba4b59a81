"""W7: a full collection scan with a compound predicate on unindexed fields."""
from __future__ import annotations

from ..queries import SCAN_FILTER
from ..timing import Sample, measure
from .base import Context, workload


@workload("W7", "full scan: $and/$or/$in/$elemMatch", "docs/s", bson_cost=(0, 1))
def full_scan(ctx: Context) -> Sample:
    coll, check = ctx.coll, ctx.check
    expected = ctx.expectations()

    def op(j: int) -> int:
        count = seq_sum = 0
        for d in coll.find(SCAN_FILTER):
            count += 1
            seq_sum += d["seq"]
        check.equal(count, expected.scan_count, "documents matching the scan filter")
        check.equal(seq_sum, expected.scan_seq_sum, "sum of seq over the matches")
        return ctx.count  # documents examined

    return measure(op, 10, ctx.budget)
