"""`--format html`: one self-contained page (inline CSS and SVG, no script, no network) with
the findings and four charts: document sizes, index sizes, query-shape costs and the estimated
shard distribution."""
from __future__ import annotations

import json
from html import escape

from . import charts
from .findings import Report
from .rules.common import human

_CSS = """body{font:14px system-ui,sans-serif;margin:2em;color:#222;max-width:1000px}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:2em;border-bottom:1px solid #ccc}
.finding{border-left:5px solid #999;padding:.4em .8em;margin:.8em 0;background:#fafafa}
.high{border-color:#b22}.medium{border-color:#d90}.low{border-color:#28a}.info{border-color:#aaa}
.sev{font-weight:bold;text-transform:uppercase;font-size:.8em}.rule{font-family:monospace}
pre{white-space:pre-wrap;font-size:.85em;background:#f0f0f0;padding:.4em}
svg text{font-size:11px;fill:#333}svg .title{font-weight:bold;font-size:12px}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:2px 6px;text-align:right}
td:first-child,th:first-child{text-align:left}"""


def render(report: Report) -> str:
    p: list[str] = ['<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
                    f"<title>ginkgodb advise: {escape(report.target)}</title><style>{_CSS}</style></head><body>",
                    f"<h1>ginkgodb advise — {escape(report.target)}</h1>",
                    f"<p>{escape(report.generated)} · {report.seconds:.1f} s · up to {report.sample_size} "
                    "documents sampled per collection</p>"]
    findings = report.ordered()
    p.append(f'<h2>Findings ({len(findings)})</h2><div id="findings">')
    for f in findings:
        p.append(f'<div class="finding {f.severity}" data-rule="{escape(f.rule)}">'
                 f'<span class="sev">{f.severity}</span> <span class="rule">{escape(f.rule)}</span> '
                 f"<b>{escape(f.namespace)}</b><p>{escape(f.summary)}</p><p>→ {escape(f.recommendation)}</p>")
        if f.estimate:
            p.append(_estimate(f.estimate))
        p.append("</div>")
    p.append("</div>")
    if report.collections:
        p.append("<h2>Collections</h2><table><tr><th>namespace</th><th>documents</th><th>data</th>"
                 "<th>avg</th><th>indexes</th><th>reads</th><th>writes</th></tr>")
        for c in report.collections:
            p.append(f"<tr><td>{escape(c['namespace'])}</td><td>{c['count']}</td><td>{human(c['dataBytes'])}</td>"
                     f"<td>{human(c['avgDocumentBytes'])}</td><td>{len(c['indexes'])}</td><td>{c['reads']}</td>"
                     f"<td>{c['writes']}</td></tr>")
        p.append("</table><h2>Document sizes</h2>")
        for c in report.collections:
            rows = [(f"{human(b['from'])}–{human(b['to'])}", b["count"]) for b in c["sizeHistogram"]]
            p.append(charts.hbars("size-histogram", f"{c['namespace']}: sampled document sizes", rows, " docs"))
        p.append("<h2>Index sizes</h2>")
        rows = [(f"{c['namespace']} {i['name']}" + (f" ({i['accesses']} ops)" if i["accesses"] is not None else ""),
                 i["bytes"]) for c in report.collections for i in c["indexes"]]
        p.append(charts.hbars("index-sizes", "index bytes (and operations served, from $indexStats)", rows, " B"))
    if report.query_shapes:
        p.append("<h2>Query-shape costs</h2>")
        rows = [(f"{s['namespace']} {_shape_label(s['queryShape'])}", s["totalExecMicros"] / 1000)
                for s in report.query_shapes]
        p.append(charts.hbars("query-costs", "total execution time per query shape", rows, " ms"))
    for sk in report.shard_keys:
        p.append(f"<h2>Shard key {escape(sk['namespace'])} {escape(json.dumps(sk['key']))}</h2>")
        groups = [f"shard {i + 1}" for i in range(sk["shards"])]
        series = []
        for e in sk["estimates"]:
            label = json.dumps(e["key"])
            series.append((f"{label} data", e["data"]))
            series.append((f"{label} inserts", e["inserts"]))
        p.append(charts.grouped("shard-distribution", f"estimated distribution over {sk['shards']} shards",
                                groups, series))
        if sk.get("analysis"):
            p.append(f"<pre>{escape(json.dumps(sk['analysis'], indent=1, default=str))}</pre>")
    for n in report.notes:
        p.append(f'<p class="note">note: {escape(n)}</p>')
    p.append("</body></html>")
    return "\n".join(p)


def _estimate(est: dict) -> str:
    """Capacity tables as rows (documents, index, data), other estimates as one line of JSON."""
    if "distributions" in est:
        return "<p>estimated distribution over the shards: see the shard-key chart below</p>"
    tables = {k: v for k, v in est.items() if isinstance(v, dict) and "today" in v}
    if not tables:
        return f"<pre>{escape(json.dumps(est, default=str))}</pre>"
    rows = ["<table class=\"estimate\"><tr><th>design</th><th>when</th><th>documents</th><th>index</th>"
            "<th>data</th><th>avg document</th></tr>"]
    for design, table in tables.items():
        for when, v in table.items():
            rows.append(f"<tr><td>{escape(design)}</td><td>{escape(when)}</td><td>{v['documents']:,}</td>"
                        f"<td>{human(v['indexBytes'])}</td><td>{human(v['dataBytes'])}</td>"
                        f"<td>{human(v['avgDocumentBytes'])}</td></tr>")
    rest = {k: v for k, v in est.items() if k not in tables}
    rows.append("</table>")
    if rest:
        rows.append(f"<pre>{escape(json.dumps(rest, default=str))}</pre>")
    return "".join(rows)


def _shape_label(shape: dict) -> str:
    part = shape.get("filter") if shape.get("command") == "find" else shape.get("pipeline")
    return f"{shape.get('command')} {json.dumps(part, default=str, separators=(',', ':'))}"[:60]
