"""`plan --sweep`: the grid's points against the target, the frontier drawn large."""

from __future__ import annotations

from auditor.report import charts as draw
from auditor.report.charts import Chart
from auditor.report.pages.parts import Doc


def chart(sweep: Doc) -> Chart:
    """Each point's change against the target tenant's p95 wait: those meeting the target, the
    others, and the frontier drawn large."""
    groups: dict[str, list[tuple[float, float]]] = {"meets": [], "misses": [], "frontier": []}
    rows = []
    for p in sweep["points"]:
        wait = float(p["p95WaitSeconds"] or 0.0)
        groups["meets" if p["meets"] else "misses"].append((p["change"], wait))
        if p["frontier"]:
            groups["frontier"].append((p["change"], wait))
        rows.append([*p["values"].values(), p["change"], wait, p["preemptions"], p["meets"]])
    labels = [a["label"] for a in sweep["axes"]]
    svg = draw.dots(
        "sweep",
        "The grid: change against p95 wait (the frontier large)",
        {k: v for k, v in groups.items() if v},
        x_title="change from the revision",
        y_title="p95 wait (s)",
        big=["frontier"],
    )
    return Chart(
        "sweep",
        "The sweep's points",
        [k for k, v in groups.items() if v],
        svg,
        [*labels, "change", "p95 wait (s)", "preemptions", "meets"],
        rows,
        {"points": sweep["points"]},
    )
