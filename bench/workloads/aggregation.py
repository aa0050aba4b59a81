"""W10 $match/$group/$sort over the collection and W15 a $lookup join."""
from __future__ import annotations

import math

from ..queries import GROUP_PIPELINE
from ..timing import Sample, measure
from .base import Context, workload

PRODUCTS = 1_000
ORDERS = 10_000


@workload("W10", "$match + $group ($sum, $avg) + $sort", "docs/s", bson_cost=(0, 1))
def group_by_category(ctx: Context) -> Sample:
    coll, check = ctx.coll, ctx.check
    expected = ctx.expectations().groups

    def op(j: int) -> int:
        got = [(g["_id"], g["total"], g["avg_price"], g["n"]) for g in coll.aggregate(GROUP_PIPELINE)]
        if check.equal([(c, t, m) for c, t, _a, m in got], [(c, t, m) for c, t, _a, m in expected],
                       "groups (category, total, n) in order"):
            check.expect(all(math.isclose(a, b, rel_tol=1e-9) for (_, _, a, _), (_, _, b, _)
                             in zip(got, expected)), "$avg of price differs")
        return ctx.count

    return measure(op, 10, ctx.budget)


@workload("W15", "$lookup 10,000 orders -> products", "orders/s", needs_data=False)
def lookup_join(ctx: Context) -> Sample:
    orders_n = min(ORDERS, ctx.ds.n)
    revenue = _load_orders(ctx, orders_n)
    orders, check = ctx.db["orders"], ctx.check
    pipeline = [{"$lookup": {"from": "products", "localField": "pid", "foreignField": "pid",
                             "as": "product"}}]

    def op(j: int) -> int:
        count, total = 0, 0.0
        for order in orders.aggregate(pipeline):
            count += 1
            product = order["product"]
            if check.equal(len(product), 1, "products joined to one order"):
                total += order["qty"] * product[0]["price"]
        check.equal(count, orders_n, "orders returned by $lookup")
        check.expect(math.isclose(total, revenue, rel_tol=1e-9), "revenue from joined prices", total)
        return count

    return measure(op, 5, ctx.budget)


def _load_orders(ctx: Context, orders_n: int) -> float:
    """Untimed setup: products (indexed on pid if the target can) and orders; returns revenue."""
    rng = ctx.rng("W15")
    products = [{"pid": p, "name": f"product {p}", "price": round(rng.uniform(1, 100), 2)}
                for p in range(PRODUCTS)]
    orders = [{"order": j, "pid": rng.randrange(PRODUCTS), "qty": rng.randrange(1, 10)}
              for j in range(orders_n)]
    ctx.db["products"].insert_many(products)
    ctx.db["orders"].insert_many(orders)
    try:
        ctx.db["products"].create_index("pid")
    except Exception as exc:  # noqa: BLE001 - an unindexed join is still a measurement
        ctx.notes.append(f"no index on products.pid ({type(exc).__name__})")
    return sum(o["qty"] * products[o["pid"]]["price"] for o in orders)
