"""A self-contained HTML page with an SVG bar chart of the paired speed-up per category."""

from __future__ import annotations

import html

from .report import Report


def speedup_chart(report: Report, title: str) -> str:
    rows = [
        (c, p.median_speedup or 0.0, p.pairs) for c in report.categories for p in report.paired[c] if p.against == "sot"
    ]
    width, bar_h, gap, left = 720, 26, 10, 170
    top = 50
    height = top + len(rows) * (bar_h + gap) + 40
    scale_max = max([2.0, *[r[1] for r in rows]]) * 1.1

    def x(value: float) -> float:
        return left + (width - left - 40) * value / scale_max

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="13">',
        f'<text x="{left}" y="24" font-size="16" font-weight="bold">Median speed-up of SoT over sequential</text>',
    ]
    for i, (category, value, pairs) in enumerate(rows):
        y = top + i * (bar_h + gap)
        colour = "#2e7d32" if value >= 1 else "#c62828"
        bold = ' font-weight="bold"' if category == "overall" else ""
        parts.append(f'<text x="{left - 8}" y="{y + 18}" text-anchor="end"{bold}>{html.escape(category)}</text>')
        parts.append(
            f'<rect x="{left}" y="{y}" width="{max(1.0, x(value) - left):.1f}" height="{bar_h}" fill="{colour}"/>'
        )
        parts.append(f'<text x="{x(value) + 6:.1f}" y="{y + 18}">{value:.2f}x (n={pairs})</text>')
    one = x(1.0)
    parts.append(
        f'<line x1="{one:.1f}" y1="{top - 8}" x2="{one:.1f}" y2="{height - 30}" stroke="#333" stroke-dasharray="4 3"/>'
    )
    parts.append(f'<text x="{one:.1f}" y="{height - 12}" text-anchor="middle">1.0x (no change)</text>')
    parts.append("</svg>")
    svg = "\n".join(parts)
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title></head>"
        f"<body style='margin:24px'><h2>{html.escape(title)}</h2>{svg}"
        "<p>Per prompt: sequential latency divided by SoT latency, measured in the same run; bars show the median.</p>"
        "</body></html>"
    )
