"""What a probe asks for, decided from the objects alone: its size, the priorities it runs at,
its Pods. No I/O: Scratch reads the objects and makes what these describe."""

from __future__ import annotations

import typing as t

from auditor.errors import ConfigError
from auditor.k8s.objects import Json
from auditor.k8s.quantity import Quantity
from auditor.kueue import capacity, quota
from auditor.verify.model import MAX_UNITS, PROBE_IMAGE, RUN_IMAGE, RUN_LABEL, Probe


def probe_for(cluster: str, cq: Json, flavors: t.Mapping[str, Json]) -> Probe:
    """The flavor and resource to probe on `cq`: a cell with a borrowingLimit if any (the
    borrowing checks need one), else the first with nominal quota; one unit is a whole unit
    when the quota is a few of them, else a quarter. Its Pods land on the flavor's nodes."""
    candidates = [
        (cell, nominal)
        for cell in quota.cells(cq)
        if (nominal := cell.quantity(quota.NOMINAL)) is not None and nominal.value > 0
    ]
    if not candidates:
        raise ConfigError(
            f"cluster {cluster}: ClusterQueue {cq['metadata']['name']} has no nominal quota "
            "to probe"
        )
    cell, nominal = next(
        ((c, n) for c, n in candidates if quota.BORROWING in c.fields), candidates[0]
    )
    whole = nominal.value == nominal.value.to_integral_value()
    parts = int(nominal.value) if whole and nominal.value <= MAX_UNITS else 4
    spec = (flavors.get(cell.flavor) or {}).get("spec") or {}
    return Probe(
        cell.flavor,
        cell.resource,
        Quantity(nominal.value / parts, nominal.format),
        dict(spec.get("nodeLabels") or {}),
        [
            {"key": taint["key"], "operator": "Exists", "effect": taint["effect"]}
            for taint in spec.get("nodeTaints") or []
        ],
    )


def priority_pair(classes: list[Json]) -> tuple[str | None, str | None]:
    """The lowest and the highest of the WorkloadPriorityClasses; no high one unless two differ."""
    ranked = sorted(classes, key=lambda c: int(c["value"]))
    if len(ranked) < 2 or ranked[0]["value"] == ranked[-1]["value"]:
        return (ranked[0]["metadata"]["name"] if ranked else None), None
    return ranked[0]["metadata"]["name"], ranked[-1]["metadata"]["name"]


def pod_template(
    run_id: str, probe: Probe, request: str, run_for: int | None, pinned: bool
) -> Json:
    """A probe Job's Pod: asks for `request` of the probe's resource; runs until deleted, or
    `run_for` seconds; `pinned`, it selects the flavor's nodes itself."""
    container: Json = {
        "name": "probe",
        "image": PROBE_IMAGE,
        "resources": {"requests": {probe.resource: request}, "limits": {probe.resource: request}},
    }
    annotations = {}
    if run_for is not None:  # on a node a container sleeps; on a simulated one kwok waits
        container.update(image=RUN_IMAGE, command=["sleep", str(run_for)])
        annotations[capacity.RUN_FOR] = f"{run_for}s"
    # Tolerating the flavor's taints only permits its nodes; the node selector chooses them.
    spec: Json = {
        "restartPolicy": "Never",
        "containers": [container],
        "tolerations": probe.tolerations,
    }
    if pinned:
        spec["nodeSelector"] = probe.node_selector
    return {
        "metadata": {"labels": {RUN_LABEL: run_id}, "annotations": annotations},
        "spec": spec,
    }
