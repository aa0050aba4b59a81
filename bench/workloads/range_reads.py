"""W6 indexed range (1% of the collection, fully iterated) and W11 sorted pagination."""
from __future__ import annotations

from ..timing import Sample, measure
from .base import Context, workload

PAGE = 20


@workload("W6", "indexed range (1% of docs, iterated)", "docs/s", uses_index=("k",),
          bson_cost=(0, 1))
def find_range(ctx: Context) -> Sample:
    coll, check, ds = ctx.coll, ctx.check, ctx.ds
    width = max(1, ds.k_values // 100)
    rng = ctx.rng("W6")
    starts = [rng.randrange(max(1, ds.k_values - width)) for _ in range(1_000)]

    def op(j: int) -> int:
        lo, hi = starts[j], starts[j] + width
        found = [d["k"] for d in coll.find({"k": {"$gte": lo, "$lt": hi}})]
        check.equal(len(found), ds.count_k_between(lo, hi), "documents in the k range")
        check.expect(all(lo <= v < hi for v in found), "a document outside the k range was returned")
        return len(found)

    return measure(op, len(starts), ctx.budget)


@workload("W11", "sort on indexed field, skip/limit pages of 20", "pages/s", uses_index=("k",),
          bson_cost=(0, PAGE))
def paginate(ctx: Context) -> Sample:
    coll, check, ds = ctx.coll, ctx.check, ctx.ds
    pages = max(1, min(ds.n // PAGE, 500))
    rng = ctx.rng("W11")
    picks = [rng.randrange(pages) for _ in range(5_000)]

    def op(j: int) -> int:
        first = picks[j] * PAGE
        found = [d["k"] for d in coll.find({}).sort("k", 1).skip(first).limit(PAGE)]
        # k = rank // 10 over a permutation of ranks, so position p in k order holds k = p // 10
        check.equal(found, [p // 10 for p in range(first, min(first + PAGE, ds.n))], "page of k values")
        return 1

    return measure(op, len(picks), ctx.budget)
