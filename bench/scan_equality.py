"""Full scans for an equality or a range on an unindexed field, by the value's type and how many
documents hold it, on ginkgodb and the peers (the bytes test of query/match/raw_prefilter.py).

    python -m bench.scan_equality [--n 20000] [--targets ginkgo-lmdb,ginkgo-memory,mongomock,mongita-memory]

Each target gets the benchmark's data set (bench/documents.py) without indexes, one document in
50 with an extra `promo` field, and runs each
filter to the end, `--repeats` times (median reported, in documents scanned per second). The
filters: a number one document in a hundred holds, a number one document holds, a double, a
number a quarter of the documents hold, a number inside an array of documents most documents
hold, an `$in` of small numbers whose bytes most documents hold elsewhere (nested `qty` fields:
the test passes and is dropped), ranges on an int, a double, a date and a string, the sparse
field's `$exists`, and a string equality (the control: strings had a bytes test before).
Then, with an index on `k` (bench/documents.py: K_PER_VALUE documents a value), short scans behind it: finds by
`k` with a residual predicate whose value changes with every query (what compiling a bytes test
per query would cost), in queries per second. Every answer's count is checked against the data
set read in Python (all of a full scan's, the first 50 of the short scans').
"""
from __future__ import annotations

import argparse
import datetime
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from .documents import Dataset
from .per_target import measure_each, save
from .targets import make_target

#: label -> (filter, the same test in Python on one document)
FILTERS: dict[str, tuple[dict, Callable[[dict], bool]]] = {
    "int, 1% of documents": ({"qty": 42}, lambda d: d["qty"] == 42),
    "int, 1 document": ({"seq": 12345}, lambda d: d["seq"] == 12345),
    "double, 1 document": ({"price": 303.85}, lambda d: d["price"] == 303.85),
    "int, 25% of documents": ({"available": 0}, lambda d: d["available"] == 0),
    "int in an array of documents, 40%": ({"items.qty": 9}, lambda d: any(it["qty"] == 9 for it in d["items"])),
    "$in of 3 small ints, 3%": ({"qty": {"$in": [1, 2, 3]}}, lambda d: d["qty"] in (1, 2, 3)),
    "int range, 5%": ({"qty": {"$gte": 95}}, lambda d: d["qty"] >= 95),
    "double range, 1%": ({"price": {"$lt": 5.0}}, lambda d: d["price"] < 5.0),
    "date range, 2%": ({"created": {"$gte": datetime.datetime(2024, 12, 24)}},
                       lambda d: d["created"] >= datetime.datetime(2024, 12, 24)),
    "int range, 50%": ({"qty": {"$lt": 50}}, lambda d: d["qty"] < 50),
    "string range, 2.5%": ({"sku": {"$gte": "SKU-000019500"}}, lambda d: d["sku"] >= "SKU-000019500"),
    "field present in 2% ($exists)": ({"promo": {"$exists": True}}, lambda d: "promo" in d),
    "string, 6% (control)": ({"category": "cat-06"}, lambda d: d["category"] == "cat-06"),
}


#: label -> (a query's filter from its k and a random source, the same test in Python)
SHORT: dict[str, tuple[Callable[[int, random.Random], dict], Callable[[dict, dict], bool]]] = {
    "k + price below a random double": (lambda k, r: {"k": k, "price": {"$lt": round(r.random() * 500, 6)}},
                                        lambda f, d: d["price"] < f["price"]["$lt"]),
    "k + qty at least a random int": (lambda k, r: {"k": k, "qty": {"$gte": r.randrange(100)}},
                                      lambda f, d: d["qty"] >= f["qty"]["$gte"]),
    "k + qty equal to a random int": (lambda k, r: {"k": k, "qty": r.randrange(100)},
                                      lambda f, d: d["qty"] == f["qty"]),
}
SHORT_QUERIES = 1_000


def _median_rate(run: Callable[[], Any], units: int, repeats: int) -> int:
    """units per second of `run()`, the median of `repeats` timings."""
    rates = []
    for _ in range(repeats):
        began = time.perf_counter()
        run()
        rates.append(units / (time.perf_counter() - began))
    return round(statistics.median(rates))


def _short_scans(coll: Any, ds: Dataset, docs: list[dict], repeats: int) -> dict[str, Any]:
    coll.create_index("k")
    out: dict[str, Any] = {}
    for label, (make, python) in SHORT.items():
        rng = random.Random(label)
        filters = [make(rng.randrange(ds.k_values), rng) for _ in range(SHORT_QUERIES)]
        for f in filters[:50]:
            got = sum(1 for _ in coll.find(f))
            expected = sum(1 for d in docs if d["k"] == f["k"] and python(f, d))
            if got != expected:
                out[label] = f"WRONG ({got} for {expected})"
                break
        else:
            out[label] = _median_rate(lambda fs=filters: [list(coll.find(f)) for f in fs], SHORT_QUERIES, repeats)
    return out


def measure(name: str, n: int, repeats: int) -> dict[str, Any]:
    target = make_target(name, tempfile.mkdtemp(prefix=f"scan-eq-{name}-"))
    client = target.open()
    out: dict[str, Any] = {"target": name, "n": n, "rates": {}}
    try:
        coll = client.bench_scan_equality.docs
        ds = Dataset(n)
        docs = [ds.doc(i) for i in range(n)]
        for i in range(0, n, 50):   # a sparse field, as the attribute and polymorphic patterns make
            docs[i]["promo"] = {"code": f"P{i}", "pct": 10}
        for i in range(0, n, 1000):
            coll.insert_many([dict(d) for d in docs[i:i + 1000]])
        for label, (filt, python) in FILTERS.items():
            expected = sum(1 for d in docs if python(d))
            try:
                got = sum(1 for _ in coll.find(filt))   # warm-up, and the answer checked
            except Exception as exc:  # noqa: BLE001 - a peer without the operator: its row says so
                out["rates"][label] = f"refused ({type(exc).__name__})"
                continue
            if got != expected:
                out["rates"][label] = f"WRONG ({got} for {expected})"
                continue
            out["rates"][label] = _median_rate(lambda f=filt: sum(1 for _ in coll.find(f)), n, repeats)
        out["short"] = _short_scans(coll, ds, docs, repeats)
    finally:
        target.close()
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.scan_equality", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=20_000)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--targets", default="ginkgo-lmdb,ginkgo-memory,mongomock,mongita-memory")
    p.add_argument("--json", default=None, help="also write the results here")
    args = p.parse_args(argv)
    results = measure_each(args.targets, lambda name: measure(name, args.n, args.repeats))
    if results is None:
        return 2
    ok = [r for r in results if "error" not in r]
    print(f"\nfull scans of {args.n:,} documents, documents scanned per second (median of {args.repeats})\n")
    print("| filter | " + " | ".join(r["target"] for r in ok) + " |")
    print("|---" * (len(ok) + 1) + "|")
    for label, (filt, _) in FILTERS.items():
        cells = [f"{r['rates'][label]:,}" if isinstance(r["rates"][label], int) else r["rates"][label] for r in ok]
        print(f"| {label} `{filt}` | " + " | ".join(cells) + " |")
    print(f"\nshort scans behind an index on k, queries per second ({SHORT_QUERIES:,} queries, median of "
          f"{args.repeats})\n")
    print("| filter | " + " | ".join(r["target"] for r in ok) + " |")
    print("|---" * (len(ok) + 1) + "|")
    for label in SHORT:
        cells = [f"{r['short'][label]:,}" if isinstance(r["short"][label], int) else r["short"][label] for r in ok]
        print(f"| {label} | " + " | ".join(cells) + " |")
    for r in results:
        if "error" in r:
            print(f"\n{r['target']}: {r['error']}")
    save(results, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
