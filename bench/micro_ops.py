"""Single-operation rates of the embedded client on LMDB, for before/after comparisons of one
checkout against another (the main suite compares targets; this compares code).

    PYTHONPATH=<checkout> python -m bench.micro_ops      # run from this checkout's root

2,000 documents of about 0.2 KB with an index on `k`; best of three rounds each of find_one by
`_id`, insert_one, update_one `$inc` by `_id` and an indexed equality find (20 documents). Set
GINKGODB_OPLOG=off to measure without the oplog.
"""
from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable


def main() -> int:
    import ginkgodb
    client = ginkgodb.MongoClient(tempfile.mkdtemp(prefix="micro-"))
    coll = client.db.c
    coll.insert_many([{"_id": i, "k": i % 100, "s": "x" * 200} for i in range(2000)])
    coll.create_index("k")
    next_id = [100_000]

    def insert(n: int) -> None:
        for i in range(n):
            next_id[0] += 1
            coll.insert_one({"_id": next_id[0], "k": i, "s": "y"})

    ops: list[tuple[str, Callable[[int], object], int]] = [
        ("find_one", lambda n: [coll.find_one({"_id": i % 2000}) for i in range(n)], 5000),
        ("insert_one", insert, 2000),
        ("update_one", lambda n: [coll.update_one({"_id": i % 2000}, {"$inc": {"k": 1}}) for i in range(n)], 2000),
        ("indexed find", lambda n: [list(coll.find({"k": i % 100})) for i in range(n)], 200),
    ]
    for name, run, n in ops:
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            run(n)
            best = min(best, time.perf_counter() - start)
        print(f"{name}: {n / best:,.0f}/s")
    client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
