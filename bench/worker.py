"""One target in one process: run the selected workloads and append JSON lines to `--out`.

Each target gets a fresh interpreter so imports, caches and memory of one engine cannot distort
another's numbers, and so `ru_maxrss` is the peak of that engine alone (plus the interpreter and
pymongo, which every target pays).

Output lines: Result records (see results.py), then one {"kind": "memory", ...} record.
"""
from __future__ import annotations

import argparse
import json
import resource
import shutil
import sys
import tempfile

from .documents import Dataset
from .results import UNAVAILABLE, Result
from .rss_sampler import RssSampler
from .targets import dir_size, make_target
from .timing import hard_deadline
from .workloads import REGISTRY, Context, run_workload

OPEN_TIMEOUT = 120.0


def peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB


class Emitter:
    def __init__(self, path: str) -> None:
        self.path = path

    def __call__(self, record: dict) -> None:
        with open(self.path, "a") as f:
            f.write(json.dumps(record, default=str) + "\n")


def run_target(name: str, n: int, seed: int, budget: float, workload_ids: list[str], repeat: int,
               emit: Emitter, scratch: str | None) -> None:
    workdir = tempfile.mkdtemp(prefix=f"bench-{name}-", dir=scratch)
    target = make_target(name, workdir)
    try:
        try:
            with hard_deadline(OPEN_TIMEOUT):
                target.open()
        except BaseException as exc:  # noqa: BLE001 - an unstartable target is a result too
            if isinstance(exc, KeyboardInterrupt):
                raise
            reason = f"cannot open: {type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:300]}"
            for wid in workload_ids:
                emit(Result(name, wid, n, UNAVAILABLE, unit=REGISTRY[wid].unit, detail=reason,
                            repeat=repeat).to_json())
            return
        rss_open = peak_rss_bytes()
        ctx = Context(target, Dataset(n, seed), budget, seed)
        with RssSampler() as rss:
            for wid in workload_ids:
                emit(run_workload(REGISTRY[wid], ctx, repeat).to_json())
        data_dir = target.data_dir()
        emit({"kind": "memory", "target": name, "n": n, "repeat": repeat,
              "peak_rss": peak_rss_bytes(), "rss_after_open": rss_open,
              "peak_anon": rss.peak_anon, "peak_file": rss.peak_file,
              "server_peak_rss": target.server_peak_rss(), "bson_bytes": ctx.bson_bytes,
              "disk_bytes": dir_size(data_dir) if data_dir else None})
    finally:
        try:
            target.close()
        finally:
            shutil.rmtree(workdir, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--target", required=True, help="a target name, or 'floors'")
    p.add_argument("--n", type=int, required=True)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--budget", type=float, default=30.0)
    p.add_argument("--workloads", default="", help="comma-separated ids, in run order")
    p.add_argument("--repeat-index", type=int, default=0)
    p.add_argument("--out", required=True)
    p.add_argument("--scratch", default=None, help="directory for data directories")
    args = p.parse_args(argv)
    emit = Emitter(args.out)
    if args.target == "floors":
        from .floors import run_floors
        for r in run_floors(args.n, args.seed, args.budget, args.repeat_index):
            emit(r.to_json())
        return 0
    ids = [w for w in args.workloads.split(",") if w]
    run_target(args.target, args.n, args.seed, args.budget, ids, args.repeat_index, emit, args.scratch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
