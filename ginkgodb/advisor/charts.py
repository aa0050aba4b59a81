"""Inline SVG bar charts for the HTML report (no script, no network)."""
from __future__ import annotations

from html import escape

_W, _BAR_H, _GAP, _LABEL_W = 640, 18, 6, 220
COLOURS = ("#2f6f9f", "#d08a2e", "#5a9f4d", "#b04a4a", "#7d5ba6", "#4aa3a3")


def hbars(kind: str, title: str, rows: list[tuple[str, float]], unit: str = "") -> str:
    """Horizontal bars, one per (label, value)."""
    top = max((v for _, v in rows), default=0) or 1
    h = 28 + len(rows) * (_BAR_H + _GAP)
    parts = [f'<svg class="chart" data-chart="{escape(kind)}" xmlns="http://www.w3.org/2000/svg" '
             f'width="{_W}" height="{h}" role="img" aria-label="{escape(title)}">',
             f'<text x="0" y="16" class="title">{escape(title)}</text>']
    span = _W - _LABEL_W - 90
    for i, (label, value) in enumerate(rows):
        y = 26 + i * (_BAR_H + _GAP)
        width = max(1.0, span * value / top)
        parts.append(f'<text x="{_LABEL_W - 6}" y="{y + 13}" text-anchor="end">{escape(label[:34])}</text>')
        parts.append(f'<rect class="bar" x="{_LABEL_W}" y="{y}" width="{width:.1f}" height="{_BAR_H}" '
                     f'fill="{COLOURS[0]}"><title>{escape(label)}: {value:g}{escape(unit)}</title></rect>')
        parts.append(f'<text x="{_LABEL_W + width + 4:.1f}" y="{y + 13}">{_short(value)}{escape(unit)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def grouped(kind: str, title: str, groups: list[str], series: list[tuple[str, list[float]]]) -> str:
    """Vertical bars: one group per label (a shard), one bar per series (a key's data or inserts)."""
    n = max(len(series), 1)
    gw = max(40, min(120, (_W - 60) // max(len(groups), 1)))
    bw = max(4, (gw - 10) // n)
    plot_h = 160
    legend_h = 18 * len(series)
    h = 40 + plot_h + 24 + legend_h
    top = max((v for _, vs in series for v in vs), default=0) or 1
    parts = [f'<svg class="chart" data-chart="{escape(kind)}" xmlns="http://www.w3.org/2000/svg" '
             f'width="{max(_W, 60 + gw * len(groups))}" height="{h}" role="img" aria-label="{escape(title)}">',
             f'<text x="0" y="16" class="title">{escape(title)}</text>']
    base = 30 + plot_h
    for gi, g in enumerate(groups):
        x0 = 50 + gi * gw
        for si, (name, vs) in enumerate(series):
            v = vs[gi] if gi < len(vs) else 0
            bh = plot_h * v / top
            parts.append(f'<rect class="bar" x="{x0 + si * bw}" y="{base - bh:.1f}" width="{bw - 1}" '
                         f'height="{bh:.1f}" fill="{COLOURS[si % len(COLOURS)]}">'
                         f'<title>{escape(name)} {escape(g)}: {100 * v:.1f}%</title></rect>')
        parts.append(f'<text x="{x0 + gw / 2 - 5:.0f}" y="{base + 16}" text-anchor="middle">{escape(g)}</text>')
    for si, (name, _) in enumerate(series):
        y = base + 30 + si * 18
        parts.append(f'<rect x="50" y="{y - 10}" width="10" height="10" fill="{COLOURS[si % len(COLOURS)]}"/>'
                     f'<text x="66" y="{y}">{escape(name)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _short(v: float) -> str:
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(v) >= div:
            return f"{v / div:.1f}{unit}"
    return f"{v:g}"
