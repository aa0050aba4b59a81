"""W8 update by an indexed key and W9 the checkout pattern (find_one_and_update)."""
from __future__ import annotations

from collections import Counter

from pymongo import ReturnDocument

from ..timing import Sample, measure
from .base import Context, workload

MAX_OPS = 20_000
VERIFY = 50  # documents re-read after the loop to confirm the updates landed


@workload("W8", "update_one $inc+$push by indexed key", "ops/s", uses_index=("sku",),
          bson_cost=(1, 1))
def update_by_key(ctx: Context) -> Sample:
    coll, check, ds = ctx.coll, ctx.check, ctx.ds
    rng = ctx.rng("W8")
    skus = [ds.sku(rng.randrange(ds.n)) for _ in range(MAX_OPS)]

    def op(j: int) -> int:
        result = coll.update_one({"sku": skus[j]}, {"$inc": {"hits": 1}, "$push": {"log": j}})
        check.equal((result.matched_count, result.modified_count), (1, 1), "matched/modified")
        return 1

    sample = measure(op, MAX_OPS, ctx.budget)
    touched = Counter(skus[: sample.ops])
    for sku, times in list(touched.items())[:VERIFY]:
        doc = coll.find_one({"sku": sku})
        check.equal((doc["hits"], len(doc["log"])), (times, times), f"hits/log of {sku}")
    return sample


@workload("W9", "find_one_and_update checkout {available > 0}", "ops/s", uses_index=("sku",),
          bson_cost=(1, 1))
def checkout(ctx: Context) -> Sample:
    """Check out a copy of a given book if one is available: filter on the unique key and on
    `available: {$gt: 0}`, `$inc: {available: -1}` and `$push` a checkout record."""
    coll, check, ds = ctx.coll, ctx.check, ctx.ds
    rng = ctx.rng("W9")
    hot = rng.sample(range(ds.n), min(ds.n, MAX_OPS // 2))  # each book requested about twice
    available = {i: ds.doc(i)["available"] for i in hot}
    picks = [hot[rng.randrange(len(hot))] for _ in range(MAX_OPS)]
    skus = {i: ds.sku(i) for i in hot}
    after = ReturnDocument.AFTER

    def op(j: int) -> int:
        i = picks[j]
        doc = coll.find_one_and_update({"sku": skus[i], "available": {"$gt": 0}},
                                       {"$inc": {"available": -1}, "$push": {"checkouts": j}},
                                       return_document=after)
        if available[i] > 0:
            available[i] -= 1
            if check.expect(doc is not None, "checkout of an available book returned None"):
                check.equal((doc["available"], doc["checkouts"][-1]), (available[i], j), "checked-out copy")
        else:
            check.expect(doc is None, "checkout succeeded with no copy available", doc and doc.get("available"))
        return 1

    return measure(op, MAX_OPS, ctx.budget)
