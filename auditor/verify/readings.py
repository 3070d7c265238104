"""What verify reads of Kueue's objects: a probe's quota cell and usage, what a report shows of
a Workload."""

from __future__ import annotations

from auditor.errors import ConfigError
from auditor.k8s.objects import Json
from auditor.k8s.quantity import Quantity
from auditor.kueue import quota as kueue_quota
from auditor.kueue.workloads import owner_job
from auditor.verify.model import Probe


def quota(obj: Json, probe: Probe, *, missing_ok: bool = False) -> dict[str, Quantity]:
    """The quota fields set on the probe's cell of a ClusterQueue or Cohort, parsed."""
    cell = kueue_quota.cell_of(obj, probe.flavor, probe.resource)
    if cell is not None:
        return cell.quantities()
    if missing_ok:
        return {}
    raise ConfigError(f"{obj['metadata']['name']} has no {probe.resource} quota in {probe.flavor}")


def usage(cq: Json, probe: Probe) -> Quantity:
    """What the queue's reservations hold of the probe's cell."""
    return kueue_quota.used(cq, (probe.flavor, probe.resource))


def borrowed(cq: Json, probe: Probe) -> Quantity:
    """How much of that the queue borrows from its cohort."""
    return kueue_quota.used(cq, (probe.flavor, probe.resource), key="borrowed")


def observed(workloads: list[Json]) -> list[Json]:
    """What a report shows of each Workload: its Job, priority and conditions."""
    return [
        {
            "namespace": w["metadata"].get("namespace"),
            "name": w["metadata"]["name"],
            "job": owner_job(w),
            "priority": (w.get("spec") or {}).get("priority"),
            "conditions": [
                {k: c.get(k) for k in ("type", "status", "reason", "message")}
                for c in (w.get("status") or {}).get("conditions") or []
            ],
        }
        for w in workloads
        if w
    ]
