"""Peak memory of ginkgodb embedded on LMDB at a large n, split by what holds it.

    PYTHONPATH=<checkout> python -m bench.memory [--n 1000000] [--tracemalloc [after-load]]
                                                 [--workloads W4,W5,W8] [--json PATH]

One process loads the benchmark data set with insert_many (batches of 1,000), builds the `k` and
`sku` indexes and runs the scaling reads, as the `--scaling` phase of `python -m bench` does, and
prints for each phase the peak of:

- anonymous resident memory (RssAnon: the Python heap, LMDB's dirty pages of an open write
  transaction, malloc's free lists);
- resident pages of memory-mapped files (RssFile), and of it LMDB's data file (`data.mdb` in
  /proc/self/smaps): page cache, shared with every process reading the file, which the kernel
  drops under memory pressure and reads back on demand;
- with `--tracemalloc`, the peak of Python's own allocations (tracemalloc slows every allocation,
  so that run's rates mean nothing; run once without it for the RSS figures and the rates), and
  the allocation sites holding the most at the end of each phase. Tracing the load of a million
  documents takes the better part of an hour; `--tracemalloc after-load` traces from the index
  build on (the load's own Python peak is small: measure it at a smaller --n).

Linux only (/proc). One measurement at a time: the figures are this process's, but the page cache
and the free memory it competes for are the machine's.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any, Optional

from .documents import Dataset
from .markdown import SCALING_WORKLOADS
from .rss_sampler import rss_split
from .targets import make_target
from .workloads import REGISTRY, Context, run_workload
from .workloads.loading import build_indexes, load_documents

MIB = 1 << 20
STATUS_INTERVAL = 0.05  # seconds between /proc/self/status samples
SMAPS_EVERY = 10  # the data file's share is read from smaps every 10th sample (smaps costs more)
DATA_FILE = "data.mdb"


def _status() -> tuple[int, int]:
    """(RssAnon, RssFile) of this process in bytes (0, 0 where /proc cannot tell)."""
    return rss_split() or (0, 0)


def _data_file_rss() -> tuple[int, int]:
    """(resident, dirty) bytes of every mapping of LMDB's data file (smaps of `.../data.mdb`):
    clean pages the kernel can drop at once, dirty ones (written by a commit, not yet written
    back; LMDB maps the file read-only) after writing them back."""
    total = dirty = 0
    inside = False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split(None, 1)[0]
            if not head.endswith(":") or "-" in head:   # a mapping's header line
                inside = line.rstrip().endswith("/" + DATA_FILE)
            elif inside and head == "Rss:":
                total += int(line.split()[1]) * 1024
            elif inside and head in ("Shared_Dirty:", "Private_Dirty:"):
                dirty += int(line.split()[1]) * 1024
    return total, dirty


@dataclass
class Phase:
    """Peaks of one phase (bytes); `traced_*` only with tracemalloc."""

    name: str
    seconds: float = 0.0
    peak_anon: int = 0
    peak_file: int = 0
    peak_data_file: int = 0
    peak_data_file_dirty: int = 0
    peak_rss: int = 0          # max over samples of anon + file (ru_maxrss is a whole-run figure)
    end_anon: int = 0
    end_file: int = 0
    traced_peak: Optional[int] = None
    traced_end: Optional[int] = None
    top_sites: list[tuple[str, int, int]] = field(default_factory=list)   # (site, bytes, blocks)
    rate: Optional[float] = None
    status: str = ""


class Sampler:
    """A thread folding /proc samples into the current phase's peaks."""

    def __init__(self) -> None:
        self.phase: Optional[Phase] = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, daemon=True, name="memory-sampler")

    def take(self, with_smaps: bool = True) -> None:
        anon, file = _status()
        data, dirty = _data_file_rss() if with_smaps else (0, 0)
        with self._lock:
            p = self.phase
            if p is None:
                return
            p.peak_anon, p.peak_file = max(p.peak_anon, anon), max(p.peak_file, file)
            p.peak_rss = max(p.peak_rss, anon + file)
            p.peak_data_file = max(p.peak_data_file, data)
            p.peak_data_file_dirty = max(p.peak_data_file_dirty, dirty)
            p.end_anon, p.end_file = anon, file

    def _run(self) -> None:
        tick = 0
        while not self._stop.wait(STATUS_INTERVAL):
            tick += 1
            self.take(with_smaps=tick % SMAPS_EVERY == 0)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    @contextmanager
    def measuring(self, phase: Phase, top: int) -> Iterator[Phase]:
        if tracemalloc.is_tracing():
            tracemalloc.reset_peak()
        with self._lock:
            self.phase = phase
        self.take()
        started = time.perf_counter()
        try:
            yield phase
        finally:
            phase.seconds = time.perf_counter() - started
            self.take()
            if tracemalloc.is_tracing():
                phase.traced_end, phase.traced_peak = tracemalloc.get_traced_memory()
                phase.top_sites = _top_sites(top)
            with self._lock:
                self.phase = None


def _top_sites(top: int) -> list[tuple[str, int, int]]:
    snap = tracemalloc.take_snapshot().filter_traces((
        tracemalloc.Filter(False, tracemalloc.__file__),
        tracemalloc.Filter(False, "<frozen importlib._bootstrap*>"),
    ))
    out = []
    for stat in snap.statistics("lineno")[:top]:
        frame = stat.traceback[0]
        out.append((f"{_short_path(frame.filename)}:{frame.lineno}", stat.size, stat.count))
    return out


def _short_path(path: str) -> str:
    for marker in ("/ginkgodb/", "/bench/", "/site-packages/"):
        at = path.rfind(marker)
        if at >= 0:
            return path[at + 1:]
    return os.path.basename(path)


def measure(n: int, seed: int, workloads: list[str], budget: float, top: int, scratch: Optional[str],
            target_name: str = "ginkgo-lmdb", trace: str = "off") -> dict[str, Any]:
    """Run the phases in one process; returns the figures (bytes) as a JSON-able dict.
    `trace`: "off", "all" (tracemalloc from the start) or "after-load"."""
    if trace not in ("off", "all", "after-load"):
        raise ValueError(f"trace: off, all or after-load, not {trace!r}")
    if trace == "all":
        tracemalloc.start(1)
    workdir = tempfile.mkdtemp(prefix="bench-memory-", dir=scratch)
    target = make_target(target_name, workdir)
    sampler = Sampler()
    phases: list[Phase] = []
    try:
        sampler.start()

        def run(name: str, body: Callable[[Phase], None]) -> None:
            gc.collect()
            phase = Phase(name)
            with sampler.measuring(phase, top):
                body(phase)
            phases.append(phase)
            print(_line(phase), file=sys.stderr, flush=True)

        ctx_box: list[Context] = []

        def open_target(_p: Phase) -> None:
            target.open()
            ctx_box.append(Context(target, Dataset(n, seed), budget, seed))

        def load(p: Phase) -> None:
            sample = load_documents(ctx_box[0], budget=float("inf"))
            p.rate = sample.rate
            p.status = ctx_box[0].check.summary() or "ok"

        def indexes(p: Phase) -> None:
            sample = build_indexes(ctx_box[0])
            p.rate = sample.rate
            p.status = ctx_box[0].check.summary() or "ok"

        def reads(wid: str) -> Callable[[Phase], None]:
            def body(p: Phase) -> None:
                result = run_workload(REGISTRY[wid], ctx_box[0])
                p.rate, p.status = result.rate, result.status + (f": {result.detail}" if result.detail else "")
            return body

        run("open", open_target)
        run("load (insert_many)", load)
        if trace == "after-load":
            tracemalloc.start(1)
        run("create_index k, sku", indexes)
        for wid in workloads:
            run(f"{wid} {REGISTRY[wid].title}", reads(wid))
        ctx = ctx_box[0]
        data_dir = target.data_dir()
        disk = os.path.getsize(os.path.join(data_dir, DATA_FILE)) if data_dir else None
        return {"target": target_name, "n": n, "seed": seed, "tracemalloc": trace,
                "bson_bytes": ctx.bson_bytes, "data_file_bytes": disk,
                "ru_maxrss": _ru_maxrss(), "phases": [asdict(p) for p in phases]}
    finally:
        sampler.stop()
        target.close()
        shutil.rmtree(workdir, ignore_errors=True)
        if tracemalloc.is_tracing():
            tracemalloc.stop()


def _ru_maxrss() -> int:
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _mib(value: Optional[int]) -> str:
    return "–" if value is None else f"{value / MIB:,.0f}"


def _line(p: Phase) -> str:
    traced = f", traced peak {_mib(p.traced_peak)} MiB" if p.traced_peak is not None else ""
    return (f"[memory] {p.name}: {p.seconds:.1f} s, peak RSS {_mib(p.peak_rss)} MiB = anon "
            f"{_mib(p.peak_anon)} + file {_mib(p.peak_file)} (data.mdb {_mib(p.peak_data_file)}){traced}")


def render(doc: dict[str, Any]) -> str:
    """The figures as a Markdown table (MiB), one row per phase, then the top allocation sites."""
    lines = [f"n = {doc['n']:,}, target {doc['target']}, BSON data {_mib(doc['bson_bytes'])} MiB, "
             f"data.mdb {_mib(doc['data_file_bytes'])} MiB, ru_maxrss {_mib(doc['ru_maxrss'])} MiB"
             + ("" if doc["tracemalloc"] == "off" else f", tracemalloc {doc['tracemalloc']} (its rates "
                                                        "are not comparable)"), "",
             "| phase | s | rate | peak RSS | peak anon | peak mapped files | of it data.mdb | of that dirty "
             "| anon at end | traced peak | traced at end |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for p in doc["phases"]:
        rate = "–" if p["rate"] is None else f"{p['rate']:,.0f}/s"
        lines.append(f"| {p['name']} | {p['seconds']:.1f} | {rate} | {_mib(p['peak_rss'])} | {_mib(p['peak_anon'])} "
                     f"| {_mib(p['peak_file'])} | {_mib(p['peak_data_file'])} | {_mib(p['peak_data_file_dirty'])} "
                     f"| {_mib(p['end_anon'])} "
                     f"| {_mib(p['traced_peak'])} | {_mib(p['traced_end'])} |")
    for p in doc["phases"]:
        if p["top_sites"]:
            lines += ["", f"Largest live allocation sites after {p['name']}:", ""]
            lines += [f"- {site}: {size / MIB:,.1f} MiB in {count:,} blocks" for site, size, count in p["top_sites"]]
    return "\n".join(lines) + "\n"


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.memory", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=1_000_000)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--target", default="ginkgo-lmdb", help="a ginkgodb embedded target (ginkgo-lmdb)")
    p.add_argument("--workloads", default=",".join(SCALING_WORKLOADS), help="reads after loading")
    p.add_argument("--budget", type=float, default=10.0, help="seconds per read workload")
    p.add_argument("--tracemalloc", nargs="?", const="all", default="off", choices=("off", "all", "after-load"),
                   help="also trace Python allocations (slow): from the start, or after loading")
    p.add_argument("--top", type=int, default=8, help="allocation sites listed per phase")
    p.add_argument("--json", default=None, help="also write the figures here")
    p.add_argument("--scratch", default=None, help="directory for the data directory")
    args = p.parse_args(argv)
    workloads = [w for w in args.workloads.split(",") if w]
    doc = measure(args.n, args.seed, workloads, args.budget, args.top, args.scratch, args.target,
                  trace=args.tracemalloc)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
    print(render(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
