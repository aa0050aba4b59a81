"""What an operation costs, in machine instructions, counted by valgrind's cachegrind: the
workload statistics on against off, or this checkout against another one (a round's start).

    PYTHONPATH=<checkout> python -m bench.instruction_cost [--n 100000] [--ops 100,1100] [--write]
    PYTHONPATH=<checkout> python -m bench.instruction_cost --baseline <other checkout> [--workloads W4,W2]

Process CPU time moves with the machine's load (other processes share the caches and the
cores), and interpreted opcodes (bench/query_stats_cost.py) miss what C code costs: the tuples,
hashes and sums of the statistics path are mostly C. The instructions a process executes do
not depend on the load. Each figure is the difference between two runs of one operation, with
`--ops A,B` repetitions after the same warm-up, divided by B - A: start-up, imports and warm-up
cancel out. The data set is the benchmark's (`bench/documents.py`, with its indexes), built
once per compared configuration without valgrind in a temporary directory (LMDB) by the
checkout that is measured; a run that writes gets its own copy, so every run starts from the
same data. With `--baseline`, the child imports ginkgodb from that checkout (this checkout's
bench drives both), and the columns are the baseline, this checkout, and this checkout with
the oplog off (`GINKGODB_OPLOG=off`: writes' growth apart from the oplog). Needs `valgrind`
(Debian's package); under a minute per run.
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .cachegrind import instructions
from .query_stats_cost import RESULTS, report

# workload -> what one counted operation does, as `python -m bench` runs it
WORKLOADS = {
    "W4": "find_one by `_id`",
    "W5": "indexed equality (~10 docs)",
    "W2": "insert_one",
    "W8": "update_one `$inc`+`$push` by indexed key",
    "W12": "delete_many by range on `k`, per document",
    "W1": "insert_many (batches of 100), per document",
}
OPERATIONS = ("W4", "W5")            # the default run: statistics on against off
WRITES = frozenset(("W2", "W8", "W12", "W1"))
BATCH = 100                          # W1's documents per insert_many
K_PER_VALUE = 10                     # documents per `k` value (bench/documents.py), W12's per operation
SCALE = {"W1": 10}                   # W1 runs a tenth of the operations (each inserts BATCH documents)
PER_OPERATION = {"W1": BATCH, "W12": K_PER_VALUE}   # documents per operation: figures are per document
WARM_UP = 100


@dataclass(frozen=True)
class Variant:
    """One compared configuration: which checkout's ginkgodb, the statistics switch (None: the
    checkout's default, for checkouts without it), the oplog switch."""

    label: str
    checkout: str | None = None
    stats: bool | None = None
    oplog: bool = True

    def env(self) -> dict[str, str]:
        env = {**os.environ, "PYTHONHASHSEED": "0"}   # the same hashes, so the same work, every run
        if not self.oplog:
            env["GINKGODB_OPLOG"] = "off"
        return env

    def args(self) -> list[str]:
        out = ["--checkout", self.checkout] if self.checkout else []
        if self.stats is not None:
            out += ["--stats", "on" if self.stats else "off"]
        return out


STATS_VARIANTS = (Variant("statistics on", stats=True), Variant("statistics off", stats=False))


def baseline_variants(baseline: str) -> tuple[Variant, ...]:
    return (Variant("baseline", checkout=os.path.abspath(baseline)), Variant("now"),
            Variant("now, oplog off", oplog=False))


def _import_from(checkout: str | None) -> Any:
    """ginkgodb from `checkout` (first on the path), this checkout's otherwise."""
    if checkout:
        sys.path.insert(0, checkout)
    import ginkgodb
    if checkout and not os.path.abspath(ginkgodb.__file__).startswith(os.path.abspath(checkout) + os.sep):
        raise RuntimeError(f"ginkgodb was imported from {ginkgodb.__file__}, not {checkout}")
    return ginkgodb


def build(path: str, n: int, checkout: str | None = None) -> None:
    """The benchmark's data set of n documents with its indexes, at `path`."""
    ginkgodb = _import_from(checkout)

    from .documents import Dataset
    ds = Dataset(n)
    client = ginkgodb.MongoClient(path)
    coll = client.db.c
    for batch in ds.batches(1000):
        coll.insert_many(batch)
    coll.create_index("k")
    coll.create_index("sku", unique=True)
    client.close()


def _operation(client: Any, n: int, op: str, pool: int) -> Callable[[int], Any]:
    """Operation number i of workload `op`; what it needs is made for `pool` operations whatever
    the run's count, so both runs of a pair do the same work outside the counted operations."""
    from .documents import Dataset
    coll = client.db.c
    ds = Dataset(n)
    rng = random.Random(4)
    if op == "W4":
        ids = [ds.object_id(rng.randrange(n)) for _ in range(4096)]
        return lambda i: coll.find_one({"_id": ids[i % 4096]})
    if op == "W5":
        ks = [rng.randrange(ds.k_values) for _ in range(4096)]
        return lambda i: list(coll.find({"k": ks[i % 4096]}))
    if op == "W8":
        skus = [ds.sku(rng.randrange(n)) for _ in range(4096)]
        return lambda i: coll.update_one({"sku": skus[i % 4096]}, {"$inc": {"hits": 1}, "$push": {"log": i}})
    if op == "W12":
        return lambda i: coll.delete_many({"k": {"$gte": i, "$lt": i + 1}})
    singles = client.db.singles     # as W2: new documents' keys wrap onto the unique `sku`s of c
    if op == "W2":
        docs = [ds.doc(n + j) for j in range(pool)]
        return lambda i: singles.insert_one(docs[i])
    docs = [ds.doc(n + j) for j in range(pool * BATCH)]
    return lambda i: singles.insert_many(docs[i * BATCH:(i + 1) * BATCH])


def child(path: str, n: int, op: str, stats: bool | None, repeat: int, pool: int,
          checkout: str | None = None) -> None:
    """One counted run: open the data set, warm up, run `op` `repeat` times, exit at once."""
    ginkgodb = _import_from(checkout)
    from ginkgodb.storage import lmdb_engine
    # valgrind cannot reserve the default map's address space; the data set needs far less
    lmdb_engine.LmdbEngine.__init__.__kwdefaults__["map_size"] = 1 << 30
    client = ginkgodb.MongoClient(path) if stats is None else ginkgodb.MongoClient(path, queryStats=stats)
    warm = WARM_UP // SCALE.get(op, 1)
    run = _operation(client, n, op, warm + pool)
    for i in range(warm):
        run(i)
    for i in range(warm, warm + repeat):
        run(i)
    os._exit(0)   # no close: a counted run's writes go to its own copy, which is dropped


def count(path: str, n: int, op: str, variant: Variant, repeat: int, pool: int) -> int:
    """Instructions of one child run under cachegrind."""
    return instructions("bench.instruction_cost",
                        ["--child", path, "--n", str(n), "--op", op, "--repeat", str(repeat),
                         "--pool", str(pool), *variant.args()], variant.env())


def _build_in_child(path: str, n: int, variant: Variant) -> None:
    cmd = [sys.executable, "-m", "bench.instruction_cost", "--build", path, "--n", str(n), *variant.args()]
    subprocess.run(cmd, env=variant.env(), check=True)


def measure(n: int, low: int, high: int, workloads: tuple[str, ...] = OPERATIONS,
            variants: tuple[Variant, ...] = STATS_VARIANTS) -> dict[str, dict[str, float]]:
    """Instructions per operation (per document for W1 and W12), per workload and variant."""
    scratch = tempfile.mkdtemp(prefix="instruction-cost-")
    try:
        out: dict[str, dict[str, float]] = {op: {} for op in workloads}
        built: dict[tuple[str | None, bool], str] = {}
        for variant in variants:
            key = (variant.checkout, variant.oplog)
            if key not in built:
                built[key] = os.path.join(scratch, f"data{len(built)}")
                _build_in_child(built[key], n, variant)
            for op in workloads:
                scale = SCALE.get(op, 1)
                lo, hi = low // scale, high // scale
                runs = []
                for repeat in (lo, hi):
                    path = built[key]
                    if op in WRITES:
                        path = os.path.join(scratch, "run")
                        shutil.rmtree(path, ignore_errors=True)
                        shutil.copytree(built[key], path)
                    runs.append(count(path, n, op, variant, repeat, hi))
                out[op][variant.label] = (runs[1] - runs[0]) / (hi - lo) / PER_OPERATION.get(op, 1)
        return out
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def table(results: dict[str, dict[str, float]], n: int, change: tuple[str, str] = ("statistics off", "statistics on"),
          change_label: str = "added") -> str:
    """A row per workload, a column per variant, and the change from `change[0]` to `change[1]`."""
    labels = list(next(iter(results.values())))
    lines = [f"n = {n:,} (the benchmark's data set), instructions per operation (valgrind cachegrind)", "",
             "| operation | " + " | ".join(labels) + f" | {change_label} |",
             "| --- " * (len(labels) + 2) + "|"]
    for op, r in results.items():
        cells = " | ".join(f"{r[label]:,.0f}" for label in labels)
        name = f"{op} {WORKLOADS[op]}" if op in WORKLOADS else op
        lines.append(f"| {name} | {cells} | {r[change[1]] / r[change[0]] - 1:+.2%} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--ops", default="100,1100", help="the two repetition counts A,B")
    p.add_argument("--baseline", help="compare with the ginkgodb of this checkout (e.g. a round's start)")
    p.add_argument("--workloads", help=f"comma-separated, of {','.join(WORKLOADS)}")
    p.add_argument("--write", action="store_true", help=f"append the table to {RESULTS}")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--build", help=argparse.SUPPRESS)
    p.add_argument("--checkout", help=argparse.SUPPRESS)
    p.add_argument("--op", choices=tuple(WORKLOADS), help=argparse.SUPPRESS)
    p.add_argument("--stats", choices=("on", "off"), help=argparse.SUPPRESS)
    p.add_argument("--repeat", type=int, help=argparse.SUPPRESS)
    p.add_argument("--pool", type=int, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.build:
        build(args.build, args.n, args.checkout)
        return 0
    if args.child:
        stats = None if args.stats is None else args.stats == "on"
        child(args.child, args.n, args.op, stats, args.repeat, args.pool or args.repeat, args.checkout)
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 2
    low, high = (int(x) for x in args.ops.split(","))
    if args.baseline:
        workloads = tuple(args.workloads.split(",")) if args.workloads else tuple(WORKLOADS)
        variants = baseline_variants(args.baseline)
        results = measure(args.n, low, high, workloads, variants)
        text = table(results, args.n, ("baseline", "now"), "now against baseline")
    else:
        workloads = tuple(args.workloads.split(",")) if args.workloads else OPERATIONS
        text = table(measure(args.n, low, high, workloads), args.n)
    report(text, args.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
