"""`status`: the cohort tree's cells, nominal, used and borrowed."""

from __future__ import annotations

from auditor.report import charts as draw
from auditor.report.charts import Chart
from auditor.report.pages.parts import Doc, number


def quota_cells(doc: Doc) -> list[tuple[str, str, Doc]]:
    """(cohort, ClusterQueue, cell) in cohort order: the cohort tree's leaves."""
    cells = [
        (cq.get("cohort") or "(no cohort)", cq["name"], cell)
        for cq in doc["clusterQueues"]
        for cell in cq.get("quota", [])
    ]
    return sorted(cells, key=lambda c: (c[0], c[1]))


def charts(doc: Doc) -> list[Chart]:
    cells = quota_cells(doc)
    if not cells:
        return []
    labels = [f"{cohort}/{cq} {c['flavor']} {c['resource']}" for cohort, cq, c in cells]
    keys = (("nominal", "nominalQuota"), ("used", "used"), ("borrowed", "borrowed"))
    series = {name: [number(c.get(key)) for _, _, c in cells] for name, key in keys}
    svg = draw.bars(
        "cohort-quota",
        "Nominal, used and borrowed per ClusterQueue and flavor, by cohort",
        labels,
        series,
        y_title="quantity",
    )
    rows = [
        [cohort, cq, c["flavor"], c["resource"], *(c.get(k) or "0" for _, k in keys)]
        for cohort, cq, c in cells
    ]
    return [
        Chart(
            "cohort-quota",
            "The cohort tree: nominal, used and borrowed per flavor",
            list(series),
            svg,
            ["cohort", "ClusterQueue", "flavor", "resource", "nominal", "used", "borrowed"],
            rows,
            {"labels": labels, "series": series},
        )
    ]
