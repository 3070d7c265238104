"""Reading Kueue's objects: a ClusterQueue's quota and usage, a Workload's conditions."""

from __future__ import annotations

from auditor.errors import ConfigError
from auditor.k8s import quantity
from auditor.k8s.quantity import Quantity
from auditor.verify.objects import Json, Probe


def cohort(cq: Json) -> str | None:
    return (cq.get("spec") or {}).get("cohortName")


def quota(obj: Json, probe: Probe, *, missing_ok: bool = False) -> dict[str, Quantity]:
    for group in (obj.get("spec") or {}).get("resourceGroups") or []:
        for flavor in group["flavors"]:
            if flavor["name"] != probe.flavor:
                continue
            for res in flavor["resources"]:
                if res["name"] == probe.resource:
                    return {
                        k: quantity.parse(res[k])
                        for k in ("nominalQuota", "borrowingLimit", "lendingLimit")
                        if res.get(k) is not None
                    }
    if missing_ok:
        return {}
    raise ConfigError(f"{obj['metadata']['name']} has no {probe.resource} quota in {probe.flavor}")


def flavor_status(cq: Json, probe: Probe, field_name: str, key: str) -> Quantity:
    for flavor in (cq.get("status") or {}).get(field_name) or []:
        if flavor["name"] == probe.flavor:
            for res in flavor["resources"]:
                if res["name"] == probe.resource:
                    return quantity.parse(res.get(key) or "0")
    return quantity.ZERO


def usage(cq: Json, probe: Probe) -> Quantity:
    return flavor_status(cq, probe, "flavorsReservation", "total")


def borrowed(cq: Json, probe: Probe) -> Quantity:
    return flavor_status(cq, probe, "flavorsReservation", "borrowed")


def condition(obj: Json, kind: str) -> Json:
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond.get("type") == kind:
            return dict(cond)
    return {}


def is_true(obj: Json, kind: str) -> bool:
    return condition(obj, kind).get("status") == "True"


def is_false(obj: Json, kind: str) -> bool:
    return condition(obj, kind).get("status") == "False"


def decided(obj: Json, kind: str) -> bool:
    return is_true(obj, kind) or is_false(obj, kind)


def reason(obj: Json, kind: str) -> str | None:
    return condition(obj, kind).get("reason")


def message(obj: Json, kind: str) -> str:
    return str(condition(obj, kind).get("message") or "")


def evicted_by_preemption(w: Json) -> bool:
    return is_true(w, "Preempted") or (condition(w, "Evicted").get("reason") == "Preempted")


def owner(w: Json) -> str | None:
    for ref in w["metadata"].get("ownerReferences") or []:
        if ref.get("kind") == "Job":
            return str(ref["name"])
    return None


def observed(workloads: list[Json]) -> list[Json]:
    """What a report shows of each Workload: its Job, priority and conditions."""
    return [
        {
            "namespace": w["metadata"].get("namespace"),
            "name": w["metadata"]["name"],
            "job": owner(w),
            "priority": (w.get("spec") or {}).get("priority"),
            "conditions": [
                {k: c.get(k) for k in ("type", "status", "reason", "message")}
                for c in (w.get("status") or {}).get("conditions") or []
            ],
        }
        for w in workloads
        if w
    ]
