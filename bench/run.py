"""Run the benchmark suite: every workload against every target, each target in its own process.

    python -m bench [--n 100000] [--targets all|ginkgo|peers|a,b] [--workloads W1,W4]
                    [--repeat 3] [--budget 30] [--scaling] [--quick] [--json PATH] [--markdown PATH]

Targets are interleaved (the order rotates every repeat) and floors are re-measured in each
repeat, so drift on a shared machine hits every column alike; medians are reported.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Any

from . import markdown
from .environment import describe, repo_root
from .floors import FLOOR_IDS
from .install import ensure_installed
from .results import ERROR, TIMEOUT, UNAVAILABLE, Result
from .summary import memory_rows, summarize
from .targets import DEFAULT_TARGETS, GINKGO_TARGETS, PEER_TARGETS, TARGETS
from .targets.server_process import repo_env
from .workloads import REGISTRY, ordered_ids
from .workloads.runner import hard_limit, load_limit

RESULTS_DIR = os.path.join(repo_root(), "bench", "results")
SCALING_NS = (10_000, 1_000_000)  # plus --n itself, re-measured in the same phase
SCALING_PEER_MAX_N = 100_000  # peers are not run at n = 1,000,000
QUICK = {"n": 2_000, "repeat": 1, "budget": 3.0}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=None, help="documents in the main collection (100,000)")
    p.add_argument("--targets", default="all",
                   help=f"all, ginkgo, peers, or a comma list of: {', '.join(TARGETS)}")
    p.add_argument("--workloads", default="all", help="all, or a comma list such as W1,W4,W7")
    p.add_argument("--repeat", type=int, default=None, help="runs per target; medians reported (3)")
    p.add_argument("--budget", type=float, default=None, help="seconds per workload (30)")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--scaling", action="store_true",
                   help="also run W4/W5/W8 at n=10,000, --n and 1,000,000 (1M: ginkgodb only) + memory")
    p.add_argument("--scaling-repeat", type=int, default=1)
    p.add_argument("--quick", action="store_true", help="n=2,000, one run, 3 s budgets (smoke test)")
    p.add_argument("--no-floors", action="store_true", help="skip the F1-F3 floors")
    p.add_argument("--no-install", action="store_true", help="do not pip install missing peers")
    p.add_argument("--json", default=None, help="result file (default bench/results/<date>.json)")
    p.add_argument("--markdown", default=None, help="Markdown table (default bench/results/latest.md)")
    p.add_argument("--scratch", default=None, help="directory for temporary data directories")
    args = p.parse_args(argv)
    defaults = QUICK if args.quick else {"n": 100_000, "repeat": 3, "budget": 30.0}
    for key, value in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    return args


def select(spec: str, known: Sequence[str], groups: dict[str, Sequence[str]]) -> list[str]:
    if spec in groups:
        return list(groups[spec])
    chosen = [s.strip() for s in spec.split(",") if s.strip()]
    unknown = [s for s in chosen if s not in known]
    if unknown:
        raise SystemExit(f"unknown: {', '.join(unknown)} (choose from {', '.join(known)})")
    return [s for s in known if s in chosen]


def progress(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


class Runner:
    """Spawns workers and collects their records."""

    def __init__(self, args: argparse.Namespace, scratch: str) -> None:
        self.args = args
        self.scratch = scratch
        self.results: list[Result] = []
        self.memory: list[dict] = []

    def worker(self, target: str, n: int, workloads: Sequence[str], repeat: int, phase: str = "main") -> None:
        out = os.path.join(self.scratch, f"{phase}-{target}-{n}-{repeat}.jsonl")
        log = os.path.join(self.scratch, f"{phase}-{target}-{n}-{repeat}.log")
        budget = self.args.budget
        cmd = [sys.executable, "-m", "bench.worker", "--target", target, "--n", str(n),
               "--seed", str(self.args.seed), "--budget", str(budget), "--repeat-index", str(repeat),
               "--workloads", ",".join(workloads), "--out", out, "--scratch", self.scratch]
        limit = len(workloads) * hard_limit(budget) + load_limit(budget) + 300
        started = time.monotonic()
        progress(f"{phase} run {repeat + 1}: {target} n={n:,} ...")
        code, killed = _run_group(cmd, log, limit)
        records = [{**r, "phase": phase} for r in _read_jsonl(out)]
        self.memory += [r for r in records if r.get("kind") == "memory"]
        got = [Result.from_json(r) for r in records if "kind" not in r]
        self.results += got
        done = {r.workload for r in got}
        unit = {w: REGISTRY[w].unit for w in workloads if w in REGISTRY}
        for wid in [w for w in (workloads or list(FLOOR_IDS)) if w not in done]:
            status = TIMEOUT if killed else ERROR
            why = (f"worker killed after {limit:.0f} s" if killed
                   else f"worker exited with code {code} before reporting: {_tail(log)}")
            self.results.append(Result(target, wid, n, status, unit=unit.get(wid, ""), detail=why,
                                       repeat=repeat, phase=phase))
        progress(f"{phase} run {repeat + 1}: {target} n={n:,} done in {time.monotonic() - started:.0f} s")

    def unavailable(self, target: str, n: int, workloads: Sequence[str], reason: str) -> None:
        for wid in workloads:
            self.results.append(Result(target, wid, n, UNAVAILABLE, unit=REGISTRY[wid].unit, detail=reason))


def _run_group(cmd: list[str], log: str, limit: float) -> tuple[int, bool]:
    """Run a worker in its own process group (its servers too); kill the group on overrun."""
    with open(log, "ab") as f:
        proc = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=repo_root(),
                                env=repo_env(), start_new_session=True)
    try:
        return proc.wait(limit), False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return proc.returncode, True
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        raise


def _read_jsonl(path: str) -> list[dict]:
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def _tail(path: str, limit: int = 400) -> str:
    try:
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", "replace").strip()
    except OSError:
        return ""
    return text[-limit:].replace("\n", " | ")


def run(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the suite as the command line says; returns the JSON document it writes."""
    args = parse_args(argv)
    targets = select(args.targets, list(TARGETS), {"all": list(DEFAULT_TARGETS), "ginkgo": GINKGO_TARGETS,
                                                   "peers": PEER_TARGETS})
    workloads = select(args.workloads, ordered_ids(), {"all": ordered_ids()})
    os.makedirs(args.scratch, exist_ok=True) if args.scratch else None
    scratch = tempfile.mkdtemp(prefix="ginkgodb-bench-", dir=args.scratch)
    runner = Runner(args, scratch)
    available = []
    for t in targets:
        reason = ensure_installed(TARGETS[t].requires, allow_install=not args.no_install)
        if reason:
            progress(f"{t}: unavailable: {reason}")
            runner.unavailable(t, args.n, workloads, f"unavailable: {reason}")
        else:
            available.append(t)
    order = available + ([] if args.no_floors else ["floors"])
    for rep in range(args.repeat):
        shift = rep % max(1, len(order))
        for t in order[shift:] + order[:shift]:
            runner.worker(t, args.n, [] if t == "floors" else workloads, rep)
    scaling_ns = sorted({*SCALING_NS, args.n}) if args.scaling else []
    for rep in range(args.scaling_repeat):
        for n in scaling_ns:
            for t in [t for t in available if t in GINKGO_TARGETS or n <= SCALING_PEER_MAX_N]:
                runner.worker(t, n, list(markdown.SCALING_WORKLOADS), rep, phase="scaling")
    try:
        return _write(args, runner, targets)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _write(args: argparse.Namespace, runner: Runner, targets: list[str]) -> dict:
    meta = describe({k: v for k, v in vars(args).items() if k not in {"json", "markdown", "scratch"}})
    cells = summarize(r for r in runner.results if r.phase == "main")
    scaling = summarize(r for r in runner.results if r.phase == "scaling")
    # memory: every target at --n from the main phase, and the other sizes from the scaling phase
    memory = memory_rows(m for m in runner.memory if (m["phase"] == "main") == (m["n"] == args.n))
    doc = {"meta": meta, "summary": [c.to_json() for c in cells.values()],
           "scaling": [c.to_json() for c in scaling.values()], "memory": memory,
           "results": [r.to_json() for r in runner.results], "raw_memory": runner.memory}
    stamp = dt.datetime.now().strftime("%Y-%m-%dT%H%M")
    out_dir = os.path.join(RESULTS_DIR, "tmp") if args.quick else RESULTS_DIR
    json_path = args.json or os.path.join(out_dir, f"{stamp}.json")
    md_path = args.markdown or os.path.join(out_dir, "quick.md" if args.quick else "latest.md")
    text = markdown.render(meta, cells, memory, targets, args.n, scaling)
    for path, content in ((json_path, json.dumps(doc, indent=1, default=str)), (md_path, text)):
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w") as f:
            f.write(content)
    print(text)
    progress(f"wrote {json_path} and {md_path}")
    return doc


def main(argv: Sequence[str] | None = None) -> int:
    run(argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
