"""Server-side SVG of a rating history: no JavaScript, readable without styles."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from html import escape

from ratings.algorithms.rating import DEFAULT_PARAMS


def rating_chart_svg(
    points: Sequence[tuple[date, int, float]],
    *,
    title: str,
    width: int = 640,
    height: int = 220,
    empty_text: str = "",
) -> str:
    """A line of the displayed rating after each match, over a band of ±2σ (on the same scale).

    ``points``: (date, displayed rating, σ) in replay order. The x axis is the match index (one
    step per match, so a busy day is not squeezed); the first and last dates label it.
    """
    pad_l, pad_r, pad_t, pad_b = 48, 12, 24, 28
    w, h = width - pad_l - pad_r, height - pad_t - pad_b
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="rating-chart" role="img" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}">'
        f"<title>{escape(title)}</title>"
    )
    if not points:
        return (
            head + f'<text x="{width / 2:.0f}" y="{height / 2:.0f}" text-anchor="middle" '
            f'font-size="13">{escape(empty_text)}</text></svg>'
        )
    scale = DEFAULT_PARAMS.display_scale
    ys = [r for _, r, _ in points]
    lows = [r - 2 * scale * s for _, r, s in points]
    highs = [r + 2 * scale * s for _, r, s in points]
    lo = min(min(ys) - 50, max(min(lows), min(ys) - 300))
    hi = max(max(ys) + 50, min(max(highs), max(ys) + 300))
    lo, hi = 50 * (lo // 50), 50 * (-(-hi // 50))
    n = len(points)

    def x(i):
        return pad_l + (w * i / (n - 1) if n > 1 else w / 2)

    def y(v):
        v = min(max(v, lo), hi)
        return pad_t + h - h * (v - lo) / (hi - lo)

    parts = [head]
    for v in range(int(lo), int(hi) + 1, 50 if hi - lo <= 400 else 100):
        parts.append(
            f'<line x1="{pad_l}" x2="{pad_l + w}" y1="{y(v):.1f}" y2="{y(v):.1f}" '
            f'stroke="#ddd" stroke-width="1"/>'
            f'<text x="{pad_l - 6}" y="{y(v) + 4:.1f}" text-anchor="end" font-size="11" '
            f'fill="#555">{v}</text>'
        )
    band = [f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(highs)]
    band += [f"{x(i):.1f},{y(v):.1f}" for i, v in reversed(list(enumerate(lows)))]
    parts.append(f'<polygon points="{" ".join(band)}" fill="#3b6ea5" fill-opacity="0.15"/>')
    line = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(ys))
    parts.append(
        f'<polyline points="{line}" fill="none" stroke="#1f4e79" stroke-width="2"/>'
        if n > 1
        else f'<circle cx="{x(0):.1f}" cy="{y(ys[0]):.1f}" r="3" fill="#1f4e79"/>'
    )
    parts.append(
        f'<circle cx="{x(n - 1):.1f}" cy="{y(ys[-1]):.1f}" r="3.5" fill="#1f4e79"/>'
        f'<text x="{x(n - 1) - 4:.1f}" y="{pad_t - 8}" text-anchor="end" font-size="12" '
        f'font-weight="bold">{ys[-1]}</text>'
        f'<text x="{pad_l}" y="{height - 8}" font-size="11" fill="#555">'
        f"{points[0][0].isoformat()}</text>"
        f'<text x="{pad_l + w}" y="{height - 8}" text-anchor="end" font-size="11" fill="#555">'
        f"{points[-1][0].isoformat()}</text></svg>"
    )
    return "".join(parts)
