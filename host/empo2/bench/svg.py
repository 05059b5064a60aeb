"""Learning curves as a small standalone SVG (no plotting library): one line per method, the
mean over seeds of memory-free rollout success against environment steps."""

from __future__ import annotations

from html import escape

COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f")
WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 720, 420, 60, 220, 30, 50


def mean_curve(curves: list[list[list[float]]], budget: float, points: int = 25) -> list[tuple[float, float]]:
    """Seeds' curves resampled on a common grid (step interpolation: the last value so far)."""
    grid = [budget * (k + 1) / points for k in range(points)]
    out = []
    for x in grid:
        values = []
        for curve in curves:
            seen = [y for cx, y in curve if cx <= x]
            if seen or curve:
                values.append(seen[-1] if seen else curve[0][1])
        if values:
            out.append((x, sum(values) / len(values)))
    return out


def learning_curves_svg(series: dict[str, list[tuple[float, float]]], budget: float, title: str) -> str:
    """series: method → [(env_steps, success)]; success in [0, 1]."""
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def sx(x: float) -> float:
        return LEFT + plot_w * x / max(budget, 1.0)

    def sy(y: float) -> float:
        return TOP + plot_h * (1 - y)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'font-family="sans-serif" font-size="12">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        f'<text x="{LEFT}" y="18" font-size="14">{escape(title)}</text>',
    ]
    for k in range(6):
        y = k / 5
        parts.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{sy(y):.1f}" y2="{sy(y):.1f}" stroke="#ddd"/>')
        parts.append(f'<text x="{LEFT - 8}" y="{sy(y) + 4:.1f}" text-anchor="end">{100 * y:.0f}%</text>')
    for k in range(5):
        x = budget * k / 4
        parts.append(f'<text x="{sx(x):.1f}" y="{TOP + plot_h + 18}" text-anchor="middle">{x:,.0f}</text>')
    parts.append(f'<text x="{LEFT + plot_w / 2}" y="{HEIGHT - 10}" text-anchor="middle">environment steps</text>')
    parts.append(f'<line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{TOP + plot_h}" stroke="black"/>')
    parts.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{TOP + plot_h}" y2="{TOP + plot_h}" stroke="black"/>')
    for i, (method, points) in enumerate(series.items()):
        colour = COLOURS[i % len(COLOURS)]
        if points:
            path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in points)
            parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{path}"/>')
        ly = TOP + 16 * i + 8
        parts.append(
            f'<line x1="{WIDTH - RIGHT + 12}" x2="{WIDTH - RIGHT + 32}" y1="{ly}" y2="{ly}" '
            f'stroke="{colour}" stroke-width="2"/>'
        )
        parts.append(f'<text x="{WIDTH - RIGHT + 38}" y="{ly + 4}">{escape(method)}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
