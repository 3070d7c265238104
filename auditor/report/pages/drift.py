"""`drift` and `drift --fleet`: findings by cluster and category; the Kueue releases."""

from __future__ import annotations

from auditor.report import charts
from auditor.report.charts import Chart
from auditor.report.pages.parts import Doc


def drift_counts(doc: Doc) -> tuple[list[str], dict[str, list[float]]]:
    """Clusters, and per category the findings of each."""
    clusters = sorted(
        {c["name"] for c in doc["clusters"]}
        | {f["cluster"] for f in doc["findings"] if f.get("cluster")}
    )
    categories = sorted({f["category"] for f in doc["findings"]})
    series: dict[str, list[float]] = {
        cat: [
            sum(1 for f in doc["findings"] if f["category"] == cat and f.get("cluster") == c)
            for c in clusters
        ]
        for cat in categories
    }
    return clusters, series


def figures(doc: Doc) -> list[Chart]:
    clusters, series = drift_counts(doc)
    if not clusters:
        return []
    svg = charts.bars(
        "drift",
        "Drift findings by cluster and category",
        clusters,
        series,
        y_title="findings",
        stacked=True,
        whole=True,
    )
    rows = [[c, *(series[k][i] for k in series)] for i, c in enumerate(clusters)]
    return [
        Chart(
            "drift",
            "Drift by cluster and category",
            list(series),
            svg,
            ["cluster", *series],
            rows,
            {"clusters": clusters, "series": series},
        )
    ]


def fleet_charts(fleet: Doc) -> list[Chart]:
    members = fleet["clusters"]
    if not members:
        return []
    names = [m["cluster"] for m in members]
    series = {"minor releases behind": [m["minorsBehind"] or 0 for m in members]}
    svg = charts.bars(
        "fleet",
        f"Kueue minor releases behind the newest pinned ({fleet['newestPinned'] or '-'})",
        names,
        series,
        y_title="minor releases",
        whole=True,
    )
    rows = [
        [
            m["cluster"],
            m["kueue"] or "-",
            m["minorsBehind"] if m["minorsBehind"] is not None else "-",
            "; ".join(
                f"{k}: {', '.join(v)}" for k, v in sorted((m["servedVersions"] or {}).items())
            )
            or "-",
        ]
        for m in members
    ]
    return [
        Chart(
            "fleet",
            "Kueue releases",
            list(series),
            svg,
            ["cluster", "Kueue", "minors behind", "served versions"],
            rows,
            {"clusters": names, "series": series},
        )
    ]
