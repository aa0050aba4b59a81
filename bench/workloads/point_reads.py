"""W4 find_one by _id and W5 indexed equality: the operations that should cost O(log n)."""
from __future__ import annotations

from ..timing import Sample, measure
from .base import Context, workload

MAX_OPS = 20_000


@workload("W4", "find_one by _id", "ops/s", bson_cost=(0, 1))
def find_by_id(ctx: Context) -> Sample:
    coll, check, ds = ctx.coll, ctx.check, ctx.ds
    rng = ctx.rng("W4")
    picks = [(ds.object_id(i), ds.sku(i)) for i in (rng.randrange(ds.n) for _ in range(MAX_OPS))]

    def op(j: int) -> int:
        oid, sku = picks[j]
        doc = coll.find_one({"_id": oid})
        if check.expect(doc is not None, "find_one by _id returned None"):
            check.equal(doc["sku"], sku, "sku of the document found by _id")
        return 1

    return measure(op, MAX_OPS, ctx.budget)


@workload("W5", "indexed equality (~10 docs)", "ops/s", uses_index=("k",), bson_cost=(0, 10))
def find_equal(ctx: Context) -> Sample:
    coll, check, ds = ctx.coll, ctx.check, ctx.ds
    rng = ctx.rng("W5")
    keys = [rng.randrange(ds.k_values) for _ in range(MAX_OPS)]

    def op(j: int) -> int:
        k = keys[j]
        found = [d["k"] for d in coll.find({"k": k})]
        check.equal(len(found), ds.count_k_between(k, k + 1), "documents with k == value")
        check.expect(all(v == k for v in found), "a document with another k was returned")
        return 1

    return measure(op, MAX_OPS, ctx.budget)
