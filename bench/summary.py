"""Reduce repeated runs to one cell per (target, workload, n): medians, because the machine is noisy.

A cell's status is the worst answer seen: one WRONG run makes the cell WRONG (a fast wrong answer
must never hide behind a median of good ones); otherwise the median of the runs that succeeded.
"""
from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from .results import MEASURED, OK, WRONG, Result


@dataclass
class Cell:
    target: str
    workload: str
    n: int
    status: str
    unit: str
    rate: float | None
    runs: int
    rates: list[float] = field(default_factory=list)
    detail: str = ""

    @property
    def measured(self) -> bool:
        return self.status == OK and self.rate is not None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def summarize(results: Iterable[Result]) -> dict[tuple[str, str, int], Cell]:
    groups: dict[tuple[str, str, int], list[Result]] = defaultdict(list)
    for r in results:
        groups[(r.target, r.workload, r.n)].append(r)
    return {key: _cell(runs) for key, runs in groups.items()}


def _cell(runs: list[Result]) -> Cell:
    first = runs[0]
    statuses = Counter(r.status for r in runs)
    if statuses[WRONG]:
        chosen = [r for r in runs if r.status in MEASURED]
        status = WRONG
        detail = next(r.detail for r in runs if r.status == WRONG)
    elif statuses[OK]:
        chosen = [r for r in runs if r.status == OK]
        status = OK
        detail = next((r.detail for r in chosen if r.detail), "")
        failed = [r for r in runs if r.status != OK]
        if failed:
            detail = "; ".join(filter(None, [detail, f"{len(failed)} of {len(runs)} runs "
                                             f"{failed[0].status}: {failed[0].detail}"]))
    else:
        chosen = []
        status = statuses.most_common(1)[0][0]
        detail = next(r.detail for r in runs if r.status == status)
    rates = [r.rate for r in chosen if r.rate is not None]
    rate = statistics.median(rates) if rates else None
    return Cell(first.target, first.workload, first.n, status, first.unit, rate, len(runs), rates, detail)


def ratio(mine: Cell | None, peer: Cell | None) -> float | None:
    """How many times faster `mine` is than `peer` (both must have correct, measured rates)."""
    if mine is None or peer is None or not (mine.measured and peer.measured) or not peer.rate:
        return None
    return mine.rate / peer.rate


def geometric_mean(values: Iterable[float]) -> float | None:
    values = [v for v in values if v and v > 0]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def memory_rows(records: Iterable[dict]) -> list[dict]:
    """Median of each memory figure per (target, n)."""
    groups: dict[tuple[str, int], list[dict]] = defaultdict(list)
    for rec in records:
        groups[(rec["target"], rec["n"])].append(rec)
    rows = []
    for (target, n), recs in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        row = {"target": target, "n": n}
        for key in ("peak_rss", "peak_anon", "peak_file", "rss_after_open", "server_peak_rss", "bson_bytes",
                    "disk_bytes"):
            values = [r[key] for r in recs if r.get(key)]
            row[key] = statistics.median(values) if values else None
        rows.append(row)
    return rows
