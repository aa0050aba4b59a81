"""W1 bulk insert, W2 single inserts, W12 bulk delete by range."""
from __future__ import annotations

from ..timing import Sample, measure, timed
from .base import Context, workload
from .loading import load_documents

SINGLES = "singles"


@workload("W1", "insert_many (batches of 1,000)", "docs/s", needs_data=False, bson_cost=(1, 0))
def insert_many(ctx: Context) -> Sample:
    return load_documents(ctx, ctx.budget)


@workload("W2", "insert_one loop (n/10)", "ops/s", needs_data=False, bson_cost=(1, 0))
def insert_one(ctx: Context) -> Sample:
    coll, check, ds = ctx.db[SINGLES], ctx.check, ctx.ds
    docs = [ds.doc(ds.n + j) for j in range(max(ds.n // 10, 100))]  # generated before timing

    def op(j: int) -> int:
        doc = docs[j]
        check.equal(coll.insert_one(doc).inserted_id, doc["_id"], "inserted_id")
        return 1

    sample = measure(op, len(docs), ctx.budget)
    check.equal(coll.count_documents({}), sample.ops, "count after insert_one loop")
    return sample


@workload("W12", "delete_many half by range on k", "docs/s", uses_index=("k",),
          bson_cost=(0, 1))
def delete_half(ctx: Context) -> Sample:
    coll, check, ds = ctx.coll, ctx.check, ctx.ds
    limit = ds.k_values // 2
    expected = ds.count_k_below(limit)

    def op() -> int:
        check.equal(coll.delete_many({"k": {"$lt": limit}}).deleted_count, expected, "deleted_count")
        return expected

    sample = timed(op)
    ctx.count -= expected
    check.equal(coll.count_documents({}), ctx.count, "count after delete_many")
    check.equal(coll.count_documents({"k": {"$lt": limit}}), 0, "deleted range is empty")
    return sample
