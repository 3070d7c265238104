"""Charts as inline SVG, drawn on the server by pygal (the one module that imports it).

Why pygal (docs/html-report.md): pure Python with no dependency of its own, a few hundred KB
installed; it draws SVG, so a report needs no script and nothing from the network, each chart is
a few tens of KB, and the SVG keeps its text (titles, legends, axis labels) for screen readers
and search. Each chart comes with its numbers as a table (`Chart.rows`) and the data it was drawn
from (`Chart.data`), which the HTML report embeds beside it.
"""

from __future__ import annotations

import math
import re
import sys
import typing as t
from dataclasses import dataclass, field

import pygal
from pygal.style import Style

# pygal appends an import hook for its map plugins (pygal.maps.*, unused here) that has no
# find_spec: every later import in the process then warns (an error under pytest's -W error).
sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "PluginImportFixer"]

# Okabe and Ito's palette, told apart with the common colour-vision deficiencies; a tenant's base
# and head share a colour, the base dashed.
COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
STYLE = Style(
    background="white",
    plot_background="white",
    font_family="system-ui, sans-serif",
    colors=COLORS,
    opacity=".85",
    guide_stroke_color="#ccc",
    major_guide_stroke_color="#999",
)
DASHED = {"dasharray": "6,4", "width": 2}
SOLID = {"width": 2}
_ID = re.compile(r"chart-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
# pygal's comments carry the date, and its config script serves only its own tooltips (which a
# self-contained report leaves out): dropped, so a report is the same bytes for the same input.
_DROPPED = re.compile(r"<!--.*?-->|<script\b.*?</script>", re.S)


@dataclass
class Chart:
    """One figure: its SVG, the series it draws, its numbers as a table, and its data."""

    key: str  # stable name: the figure's id in the page
    title: str
    series: list[str]
    svg: str
    columns: list[str]
    rows: list[list[t.Any]]
    data: dict[str, t.Any] = field(default_factory=dict)


def _config(title: str, **extra: t.Any) -> dict[str, t.Any]:
    return {
        "title": title,
        "style": STYLE,
        "js": [],
        "disable_xml_declaration": True,
        "width": 900,
        "height": 420,
        "legend_at_bottom": True,
        "legend_at_bottom_columns": 4,
        "truncate_legend": -1,
        "truncate_label": -1,
        "print_zeroes": False,
        **extra,
    }


def _svg(chart: t.Any, key: str) -> str:
    svg: str = chart.render(is_unicode=True)
    svg = _DROPPED.sub("", svg)
    svg = _ID.sub(f"chart-{key}", svg)
    svg = _UUID.sub(key, svg)  # the style sheet's selectors name the id too
    return svg.replace("<svg ", f'<svg role="img" aria-labelledby="title-{key}" ', 1)


def lines(
    key: str,
    title: str,
    x: list[float],
    series: dict[str, list[float]],
    *,
    x_title: str,
    y_title: str,
    dashed: t.Collection[str] = (),
    colors: t.Sequence[str] | None = None,
) -> str:
    """Step-free lines over a shared x axis; names in `dashed` drawn dashed."""
    chart = pygal.XY(
        **_config(title, x_title=x_title, y_title=y_title, show_dots=False, include_x_axis=True)
        | ({"style": _styled(colors)} if colors else {})
    )
    for name, values in series.items():
        chart.add(
            name,
            list(zip(x, values, strict=True)),
            stroke_style=DASHED if name in dashed else SOLID,
        )
    return _svg(chart, key)


def whole_ticks(top: float) -> list[int]:
    """Whole-number ticks from 0 to at least `top`, at most about eight of them, a step of 1, 2
    or 5 times a power of ten: a count has no 0.2 of a finding or a GPU."""
    top = max(1, math.ceil(top))
    power = 10 ** max(0, len(str(top)) - 2)
    step = next(s * power for s in (1, 2, 5, 10, 20, 50) if top / (s * power) <= 8)
    return list(range(0, math.ceil(top / step) * step + 1, step))


def bars(
    key: str,
    title: str,
    labels: list[str],
    series: dict[str, list[float]],
    *,
    y_title: str,
    stacked: bool = False,
    colors: t.Sequence[str] | None = None,
    whole: bool = False,
) -> str:
    """Bars per label, a bar per series (stacked if asked); `whole`: the axis counts, so its
    ticks are whole numbers."""
    kind = pygal.StackedBar if stacked else pygal.Bar
    sums = [sum(v) for v in zip(*series.values(), strict=True)] if stacked else []
    top = max([*sums, *(v for values in series.values() for v in values)], default=0.0)
    chart = kind(
        **_config(title, y_title=y_title, x_label_rotation=20 if len(labels) > 6 else 0)
        | ({"style": _styled(colors)} if colors else {})
        | ({"y_labels": whole_ticks(top)} if whole and series else {})  # pygal: none without data
    )
    chart.x_labels = labels
    for name, values in series.items():
        chart.add(name, values)
    return _svg(chart, key)


def dots(
    key: str,
    title: str,
    series: dict[str, list[tuple[float, float]]],
    *,
    x_title: str,
    y_title: str,
    big: t.Collection[str] = (),
    xrange: tuple[float, float] | None = None,
    whole: bool = False,
) -> str:
    """Points without lines (events on a timeline); names in `big` drawn larger; `whole`: the
    y axis counts (whole-number ticks)."""
    top = max((y for points in series.values() for _, y in points), default=0.0)
    chart = pygal.XY(
        **_config(
            title,
            x_title=x_title,
            y_title=y_title,
            stroke=False,
            include_x_axis=True,
            xrange=xrange,
            # at the bottom, pygal leaves a short legend no room below the axis title
            legend_at_bottom=False,
        )
        | ({"y_labels": whole_ticks(top)} if whole and series else {})  # pygal: none without data
    )
    for name, points in series.items():
        chart.add(name, points, dots_size=7 if name in big else 3)
    return _svg(chart, key)


def _styled(colors: t.Sequence[str]) -> Style:
    return Style(**{**STYLE.to_dict(), "colors": tuple(colors)})


def paired_colors(names: t.Sequence[str], *, tint_base: bool = False) -> list[str]:
    """One colour per pair of series (a tenant's base and head, in that order); with
    `tint_base`, the base's lighter (bars cannot be dashed)."""
    return [
        _tint(COLORS[(i // 2) % len(COLORS)])
        if tint_base and i % 2 == 0
        else COLORS[(i // 2) % len(COLORS)]
        for i in range(len(names))
    ]


def _tint(color: str) -> str:
    """The colour half-way to white."""
    rgb = [int(color[i : i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{(c + 255) // 2:02X}" for c in rgb)


def timeline(
    key: str,
    title: str,
    rows: list[tuple[str, int]],
    series: dict[str, list[tuple[float, float]]],
    *,
    x_title: str,
    xrange: tuple[float, float],
) -> str:
    """Events on a time axis, one row per thing (`rows`: its label and its y), a series per kind
    of event, drawn large."""
    chart = pygal.XY(
        **_config(
            title,
            x_title=x_title,
            stroke=False,
            xrange=xrange,
            range=(-0.5, len(rows) - 0.5),
            y_labels=[{"label": label, "value": y} for label, y in rows],
            height=max(240, 120 + 36 * len(rows)),
            legend_at_bottom=False,
        )
    )
    for name, points in series.items():
        chart.add(name, points, dots_size=6)
    return _svg(chart, key)
