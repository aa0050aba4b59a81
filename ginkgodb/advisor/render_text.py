"""The terminal report: findings by severity, then collections and costly query shapes.
Colour on a terminal (rich when installed, ANSI escapes otherwise), plain text elsewhere."""
from __future__ import annotations

import json
from typing import Any, TextIO

from .findings import Report
from .rules.common import human

_ANSI = {"high": "\x1b[1;31m", "medium": "\x1b[33m", "low": "\x1b[36m", "info": "\x1b[2m"}
_RESET = "\x1b[0m"


def render(report: Report, out: TextIO, colour: bool = False) -> None:
    paint = _painter(colour)
    w = out.write
    w(f"ginkgodb advise — {report.target}  ({report.generated}, {report.seconds:.1f} s, "
      f"up to {report.sample_size} documents sampled per collection)\n\n")
    findings = report.ordered()
    w(f"{len(findings)} finding(s)\n")
    for f in findings:
        w(f"\n{paint(f.severity, f'[{f.severity.upper()}]')} {f.rule}  {f.namespace}\n")
        w(f"  {f.summary}\n")
        w(f"  → {f.recommendation}\n")
        if f.estimate and "distributions" not in f.estimate:
            w(f"  estimate: {_compact(f.estimate)}\n")
    if report.collections:
        w("\ncollections\n")
        for c in report.collections:
            w(f"  {c['namespace']}: {c['count']} documents, {human(c['dataBytes'])} data, "
              f"avg {human(c['avgDocumentBytes'])}, {len(c['indexes'])} index(es) "
              f"{human(sum(i['bytes'] for i in c['indexes']))}, {c['reads']} reads / {c['writes']} writes\n")
    if report.query_shapes:
        w("\ncostliest query shapes\n")
        for s in report.query_shapes[:10]:
            w(f"  {s['namespace']} {s['execCount']}× {s['totalExecMicros'] / 1000:.1f} ms "
              f"examined {s['docsExamined']} returned {s['docsReturned']} {s['planSummary'] or ''}: "
              f"{_compact(s['queryShape'])}\n")
    for sk in report.shard_keys:
        w(f"\nshard key {sk['namespace']} {sk['key']} over {sk['shards']} shards\n")
        for e in sk["estimates"]:
            w(f"  {_compact(e['key'])}: data {_pct(e['data'])}  inserts {_pct(e['inserts'])}  ({e['note']})\n")
    for n in report.notes:
        w(f"\nnote: {n}\n")


def _pct(shares: list[float]) -> str:
    return " ".join(f"{100 * s:.0f}%" for s in shares)


def _compact(v: Any) -> str:
    return json.dumps(v, default=str, separators=(",", ":"))[:300]


def _painter(colour: bool):
    if not colour:
        return lambda severity, text: text
    try:
        from rich.console import Console
        from rich.text import Text
        console = Console(force_terminal=True, color_system="standard")
        styles = {"high": "bold red", "medium": "yellow", "low": "cyan", "info": "dim"}

        def paint(severity: str, text: str) -> str:
            with console.capture() as cap:
                console.print(Text(text, style=styles[severity]), end="")
            return cap.get()
        return paint
    except ImportError:
        return lambda severity, text: f"{_ANSI[severity]}{text}{_RESET}"
