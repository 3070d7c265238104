"""`plan` (offline, `--live`): each quota cell that changed, base and head."""

from __future__ import annotations

from auditor.report import charts
from auditor.report.charts import Chart
from auditor.report.pages.parts import Doc, number


def quota_rows(doc: Doc) -> list[Doc]:
    """The plan's numeric quota changes: one per ClusterQueue/Cohort, flavor and resource."""
    return [
        c for c in doc.get("changes", []) if c.get("resource") and c.get("delta") not in (None, "")
    ]


def figures(doc: Doc) -> list[Chart]:
    changes = quota_rows(doc)
    if not changes:
        return []
    labels = [
        f"{c['cluster']}/{c['name']} {c['flavor']} {c['resource']} {_field(c)}" for c in changes
    ]
    series = {
        "base": [number(c["before"]) for c in changes],
        "head": [number(c["after"]) for c in changes],
    }
    svg = charts.bars("quota", "Quota, base and head", labels, series, y_title="quantity")
    rows = [
        [lab, c["before"] if c["before"] is not None else "-", c["after"] or "-", c["delta"]]
        for lab, c in zip(labels, changes, strict=True)
    ]
    return [
        Chart(
            "quota",
            "Quota per ClusterQueue, flavor and resource, base → head",
            list(series),
            svg,
            ["queue flavor resource field", "base", "head", "change"],
            rows,
            {"labels": labels, "series": series},
        )
    ]


def _field(change: Doc) -> str:
    return str(change.get("path") or "").rsplit(".", 1)[-1]
