"""W16 a two-document transfer in a transaction, W17 the bank workload: 4 threads of transfers
over few accounts, so transactions conflict and with_transaction retries them."""
from __future__ import annotations

import threading
import time

from ..timing import Sample, measure
from .base import Context, workload

ACCOUNTS = "accounts"
MAX_OPS = 20_000


def _open_accounts(ctx: Context, name: str, n: int) -> object:
    coll = ctx.db[name]
    coll.drop()
    coll.insert_many([{"_id": i, "balance": 1_000} for i in range(n)])
    return coll


def _transfer(client: object, coll: object, src: int, dst: int, session: object) -> None:
    def body(s: object) -> None:
        coll.update_one({"_id": src}, {"$inc": {"balance": -1}}, session=s)
        coll.update_one({"_id": dst}, {"$inc": {"balance": 1}}, session=s)
    session.with_transaction(body)


@workload("W16", "transfer between 2 documents in a transaction", "txns/s", needs_data=False)
def transfer(ctx: Context) -> Sample:
    coll, check = _open_accounts(ctx, ACCOUNTS, 1_000), ctx.check
    rng = ctx.rng("W16")
    pairs = [rng.sample(range(1_000), 2) for _ in range(MAX_OPS)]
    client = ctx.target.client
    with client.start_session() as session:
        def op(j: int) -> int:
            src, dst = pairs[j]
            _transfer(client, coll, src, dst, session)
            return 1
        sample = measure(op, MAX_OPS, ctx.budget)
    total = sum(d["balance"] for d in coll.find({}, {"balance": 1}))
    check.equal(total, 1_000 * 1_000, "total balance after the transfers")
    return sample


@workload("W17", "bank: 4 threads of transfers over 10 accounts (conflicts)", "txns/s", needs_data=False)
def bank(ctx: Context) -> Sample:
    coll, check, client = _open_accounts(ctx, "bank", 10), ctx.check, ctx.target.client
    stop = time.perf_counter() + ctx.budget
    done, attempts, errors = [0] * 4, [0] * 4, []

    def worker(i: int) -> None:
        rng = ctx.rng(f"W17:{i}")
        try:
            with client.start_session() as session:
                while time.perf_counter() < stop:
                    src, dst = rng.sample(range(10), 2)

                    def body(s: object, src: int = src, dst: int = dst) -> None:
                        attempts[i] += 1
                        coll.update_one({"_id": src}, {"$inc": {"balance": -1}}, session=s)
                        coll.update_one({"_id": dst}, {"$inc": {"balance": 1}}, session=s)
                    session.with_transaction(body)
                    done[i] += 1
        except Exception as exc:  # reported as the workload's failure below
            errors.append(exc)

    start = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - start
    if errors:
        raise errors[0]
    commits = sum(done)
    ctx.notes.append(f"{sum(attempts) - commits} WriteConflict retries for {commits} commits")
    total = sum(d["balance"] for d in coll.find({}, {"balance": 1}))
    check.equal(total, 10 * 1_000, "total balance after concurrent transfers")
    return Sample(commits, commits, seconds)
