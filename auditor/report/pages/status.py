"""`status`: the cohort tree's cells, nominal, used and borrowed, one chart per resource on its
own axis, GPUs first. On one axis memory in bytes (up to 10^12) flattened a GPU cluster's GPUs
to nothing; so each resource gets its unit (GiB for bytes, cores for cpu, whole numbers for what
Kubernetes counts: GPUs, pods, any extended resource)."""

from __future__ import annotations

import re
import typing as t

from auditor.kueue.quota import NOMINAL
from auditor.report import charts
from auditor.report.charts import Chart
from auditor.report.pages.parts import Doc, number

Cell = tuple[str, str, Doc]  # cohort, ClusterQueue, quota cell
KEYS = (("nominal", NOMINAL), ("used", "used"), ("borrowed", "borrowed"))
BYTES = ("memory", "ephemeral-storage")  # and hugepages-*: drawn in GiB
GIB = 2**30


def quota_cells(doc: Doc) -> list[Cell]:
    """(cohort, ClusterQueue, cell) in cohort order: the cohort tree's leaves."""
    cells = [
        (cq.get("cohort") or "(no cohort)", cq["name"], cell)
        for cq in doc["clusterQueues"]
        for cell in cq.get("quota", [])
    ]
    return sorted(cells, key=lambda c: (c[0], c[1]))


def resource_order(name: str) -> tuple[int, str]:
    """GPUs first (what a GPU cluster is about), then cpu, memory, the rest by name."""
    if "gpu" in name.lower():
        return (0, name)
    return ({"cpu": 1, "memory": 2}.get(name, 3), name)


def unit(resource: str) -> tuple[str, float, bool]:
    """The axis title, the divisor from the quantity, and whether the axis counts."""
    if resource in BYTES or resource.startswith("hugepages-"):
        return f"{resource} (GiB)", GIB, False
    if resource == "cpu":
        return "cpu (cores)", 1, False
    return ("GPUs" if "gpu" in resource.lower() else resource), 1, True


def key_of(resource: str) -> str:
    """The figure's id: `quota-` and the resource, e.g. quota-nvidia-com-gpu."""
    return "quota-" + re.sub(r"[^a-z0-9]+", "-", resource.lower()).strip("-")


def figures(doc: Doc) -> list[Chart]:
    cells = quota_cells(doc)
    resources = sorted({c["resource"] for _, _, c in cells}, key=resource_order)
    return [
        _chart(resource, [x for x in cells if x[2]["resource"] == resource])
        for resource in resources
    ]


def _chart(resource: str, cells: list[Cell]) -> Chart:
    y_title, divisor, whole = unit(resource)
    labels = [f"{cohort}/{cq} {c['flavor']}" for cohort, cq, c in cells]

    def scaled(raw: t.Any) -> float:
        return round(number(raw) / divisor, 3)

    series = {name: [scaled(c.get(key)) for _, _, c in cells] for name, key in KEYS}
    key = key_of(resource)
    title = f"{resource}: nominal, used and borrowed per ClusterQueue and flavor, by cohort"
    svg = charts.bars(key, title, labels, series, y_title=y_title, whole=whole)
    rows = [
        [cohort, cq, c["flavor"], *(c.get(k) or "0" for _, k in KEYS)] for cohort, cq, c in cells
    ]
    return Chart(
        key,
        f"The cohort tree's {resource}: nominal, used and borrowed per flavor",
        list(series),
        svg,
        ["cohort", "ClusterQueue", "flavor", "nominal", "used", "borrowed"],
        rows,
        {"resource": resource, "unit": y_title, "labels": labels, "series": series},
    )
