"""Rates of the tools (`ginkgodb dump/restore/export/import`) on the benchmark's data set.

    python -m bench.tools                    # n=100,000, 3 runs, medians
    python -m bench.tools --n 20000 --repeat 1 --markdown bench/results/tmp/tools.md

Each run loads `bench/documents.py`'s data set (untimed) into a fresh data directory, then times
each tool as `ginkgodb <tool> --dbpath ...` runs it (in this process, through the command line
entry point, so argument parsing, file I/O and the embedded client are all counted), and checks
the answer: every restored or imported document is compared byte for byte with the source.

| id | what | rate |
|---|---|---|
| T1 | dump to a directory | docs/s |
| T2 | restore that directory into an empty data directory (`_id` index only, as W1 loads) | docs/s |
| T3 | dump to an archive | docs/s |
| T4 | restore the archive | docs/s |
| T5 | export, relaxed Extended JSON | docs/s |
| T6 | export, canonical Extended JSON | docs/s |
| T7 | import the canonical export | docs/s |
| T8 | restore with the W3 indexes (`k`, unique `sku`) rebuilt after the data | docs/s |
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Optional

import bson
from bson.raw_bson import RawBSONDocument

from .documents import Dataset

TARGETS = {  # the brief's floors, docs/s
    "T1": 50_000, "T2": 50_000, "T3": 50_000, "T4": 50_000,
    "T5": 30_000, "T6": 30_000, "T7": 30_000,
}
NAMES = {
    "T1": "dump to a directory", "T2": "restore a directory", "T3": "dump to an archive",
    "T4": "restore an archive", "T5": "export, relaxed JSON", "T6": "export, canonical JSON",
    "T7": "import canonical JSON", "T8": "restore + k, sku indexes",
}
RAW = bson.CodecOptions(document_class=RawBSONDocument)


def _cli(*argv: str) -> None:
    from ginkgodb.cli import main
    with contextlib.redirect_stderr(io.StringIO()) as err:
        code = main(["--quiet" if a == "--quiet" else a for a in argv])
    if code != 0:
        raise RuntimeError(f"ginkgodb {' '.join(argv)} failed: {err.getvalue()[-500:]}")


def _load(path: str, ds: Dataset, indexes: bool = False) -> None:
    from ginkgodb import MongoClient
    client = MongoClient(path)
    coll = client.bench.docs
    for batch in ds.batches(1000):
        coll.insert_many([RawBSONDocument(bson.encode(d)) for d in batch])
    if indexes:
        coll.create_index("k")
        coll.create_index("sku", unique=True)
    client.close()


def _same(a: str, b: str, db: str = "bench") -> bool:
    from ginkgodb import MongoClient
    ca, cb = MongoClient(a), MongoClient(b)
    try:
        left = ca[db].docs.with_options(codec_options=RAW).find().sort("_id", 1)
        right = cb[db].docs.with_options(codec_options=RAW).find().sort("_id", 1)
        return all(x.raw == y.raw for x, y in zip(left, right, strict=True))
    except ValueError:
        return False
    finally:
        ca.close()
        cb.close()


CPU: dict[str, float] = {}     # id -> CPU docs/s of the last timed run (with its workers)
LOAD: dict[str, float] = {}    # id -> the machine's 1-minute load average as that run ended
MAIN: dict[str, float] = {}    # id -> docs/s over this process's CPU time alone: the rate the
#                                tool's own process allows when its workers have a core of their own


def _cpu() -> float:
    """CPU seconds of this process and of its finished worker processes (the tools' workers
    are joined before a command returns, so theirs are counted)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _timed(work: Callable[[], None]) -> float:
    """Wall-clock seconds of `work`; its CPU seconds (all processes) are kept in _last_cpu."""
    global _last_cpu, _last_main
    cpu, main, start = _cpu(), time.process_time(), time.perf_counter()
    work()
    _last_cpu = _cpu() - cpu
    _last_main = time.process_time() - main
    elapsed = time.perf_counter() - start
    global _last_load
    _last_load = os.getloadavg()[0]
    return elapsed


_last_load = 0.0


_last_cpu = 0.0
_last_main = 0.0


def _note(wid: str, n: int) -> None:
    CPU[wid], MAIN[wid], LOAD[wid] = n / max(_last_cpu, 1e-9), n / max(_last_main, 1e-9), _last_load


def one_run(n: int, scratch: str) -> dict[str, tuple[float, bool]]:
    """{id: (docs/s, answer correct)} for one run."""
    ds = Dataset(n)
    src = os.path.join(scratch, "src")
    _load(src, ds)
    out: dict[str, tuple[float, bool]] = {}
    dump_dir, archive = os.path.join(scratch, "dump"), os.path.join(scratch, "all.archive")
    t = _timed(lambda: _cli("dump", "--dbpath", src, "--out", dump_dir, "--quiet"))
    _note("T1", n)
    out["T1"] = (n / t, os.path.getsize(os.path.join(dump_dir, "bench", "docs.bson")) > 0)
    dst = os.path.join(scratch, "dst")
    t = _timed(lambda: _cli("restore", "--dbpath", dst, dump_dir, "--quiet"))
    _note("T2", n)
    out["T2"] = (n / t, _same(src, dst))
    t = _timed(lambda: _cli("dump", "--dbpath", src, f"--archive={archive}", "--quiet"))
    _note("T3", n)
    out["T3"] = (n / t, os.path.getsize(archive) > 0)
    dst2 = os.path.join(scratch, "dst2")
    t = _timed(lambda: _cli("restore", "--dbpath", dst2, f"--archive={archive}", "--quiet"))
    _note("T4", n)
    out["T4"] = (n / t, _same(src, dst2))
    relaxed, canonical = os.path.join(scratch, "r.json"), os.path.join(scratch, "c.json")
    t = _timed(lambda: _cli("export", "--dbpath", src, "-d", "bench", "-c", "docs", "-o",
                            relaxed, "--quiet"))
    _note("T5", n)
    out["T5"] = (n / t, sum(1 for _ in open(relaxed, "rb")) == n)
    t = _timed(lambda: _cli("export", "--dbpath", src, "-d", "bench", "-c", "docs", "-o",
                            canonical, "--jsonFormat", "canonical", "--quiet"))
    _note("T6", n)
    out["T6"] = (n / t, sum(1 for _ in open(canonical, "rb")) == n)
    dst3 = os.path.join(scratch, "dst3")
    t = _timed(lambda: _cli("import", "--dbpath", dst3, "-d", "bench", "-c", "docs", "--file",
                            canonical, "--quiet"))
    _note("T7", n)
    out["T7"] = (n / t, _same(src, dst3))
    src_ix, dump_ix, dst4 = (os.path.join(scratch, p) for p in ("srcix", "dumpix", "dst4"))
    _load(src_ix, ds, indexes=True)
    _cli("dump", "--dbpath", src_ix, "--out", dump_ix, "--quiet")
    t = _timed(lambda: _cli("restore", "--dbpath", dst4, dump_ix, "--quiet"))
    _note("T8", n)
    out["T8"] = (n / t, _same(src_ix, dst4))
    return out


def _spread(values: list[float]) -> str:
    """median, and the range when there is more than one run"""
    mid = f"{statistics.median(values):,.0f}"
    return mid if len(values) < 2 else f"{mid} ({min(values):,.0f}-{max(values):,.0f})"


def markdown(n: int, runs: list[dict[str, tuple[float, bool, float, float, float]]]) -> str:
    lines = [f"# Tools: rates on the benchmark data set (n = {n:,}, median of {len(runs)} runs)",
             "", "Embedded (`--dbpath`, LMDB). docs/s is over the wall-clock time of the whole "
             "command; CPU docs/s over the CPU time of the tool's processes together (restore, "
             "export and import run one step in worker processes on a machine with two cores "
             "or more, so on an idle machine wall-clock docs/s exceeds it); main CPU docs/s is "
             "over the tool's own process's CPU time alone and workers CPU docs/s over its "
             "workers' (each bounds the wall-clock rate when the other has a core of its own); "
             "load is the machine's 1-minute load average as the run ended. Medians, with the "
             "range over the runs in brackets.",
             "", "| id | what | docs/s | CPU docs/s | main CPU docs/s | workers CPU docs/s | "
             "target | load | answer |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for wid in NAMES:
        rates = [r[wid][0] for r in runs]
        cpu = [r[wid][2] for r in runs]
        load = [r[wid][3] for r in runs]
        main = [r[wid][4] for r in runs]
        workers = [_workers_rate(r[wid][2], r[wid][4]) for r in runs]
        ok = all(r[wid][1] for r in runs)
        target = TARGETS.get(wid)
        shown = [w for w in workers if w is not None]
        lines.append(f"| {wid} | {NAMES[wid]} | {_spread(rates)} | {_spread(cpu)} | "
                     f"{_spread(main)} | {_spread(shown) if len(shown) == len(workers) else '–'} | "
                     f"{f'{target:,}' if target else '–'} | "
                     f"{statistics.median(load):.1f} ({min(load):.1f}-{max(load):.1f}) | "
                     f"{'ok' if ok else '**WRONG**'} |")
    return "\n".join(lines) + "\n"


def _workers_rate(all_rate: float, main_rate: float) -> Optional[float]:
    """docs/s over the workers' CPU time (all processes' minus the tool's own), None without
    workers (the difference is then measurement noise)."""
    spare = 1 / all_rate - 1 / main_rate          # seconds a document of worker CPU
    return 1 / spare if spare > 0.05 / main_rate else None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.tools", description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--markdown", default=os.path.join("bench", "results", "tools.md"))
    p.add_argument("--json", help="also write each run's figures here (to combine runs)")
    args = p.parse_args(argv)
    runs = []
    for i in range(args.repeat):
        scratch = tempfile.mkdtemp(prefix="ginkgo-bench-tools-")
        try:
            run = one_run(args.n, scratch)
            runs.append({k: (rate, ok, CPU[k], LOAD[k], MAIN[k]) for k, (rate, ok) in run.items()})
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        print(f"run {i + 1}: " + ", ".join(f"{k} {v[0]:,.0f} (CPU {v[2]:,.0f}, main {v[4]:,.0f}, "
                                          f"load {v[3]:.1f})"
                                          for k, v in runs[-1].items()),
              file=sys.stderr, flush=True)
    text = markdown(args.n, runs)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"n": args.n, "runs": runs}, f)
    os.makedirs(os.path.dirname(args.markdown) or ".", exist_ok=True)
    with open(args.markdown, "w") as f:
        f.write(text)
    print(text)
    return 0 if all(v[1] for r in runs for v in r.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
