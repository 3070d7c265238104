"""A Workload's state from the conditions Kueue writes, what it holds, and who is evicted first.

Kueue's conditions on a Workload: QuotaReserved (a ClusterQueue set quota aside for it),
Admitted (reserved and every admission check passed), Evicted (being taken off its quota:
preemption, a stopped queue, PodsReady timeout...), Preempted (why it was preempted), PodsReady
and Finished. A Workload being evicted keeps its reservation until Kueue releases it, so what it
holds is read from QuotaReserved, not from the state a person is shown.
"""

from __future__ import annotations

import re
import typing as t
from decimal import Decimal

from auditor.k8s import conditions
from auditor.k8s.objects import KUEUE_GROUP, Json
from auditor.k8s.quantity import parse
from auditor.kueue.quota import Cell

# The labels by which a Job (any kind Kueue integrates) names its LocalQueue and its
# WorkloadPriorityClass; Kueue makes the Workload from them.
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
# A Workload's spec.priorityClassSource when its priority is a WorkloadPriorityClass's.
WORKLOAD_PRIORITY_SOURCE = f"{KUEUE_GROUP}/workloadpriorityclass"

QUOTA_RESERVED = "QuotaReserved"
ADMITTED = "Admitted"
EVICTED = "Evicted"
PREEMPTED = "Preempted"
FINISHED = "Finished"
PODS_READY = "PodsReady"

State = t.Literal["finished", "evicted", "admitted", "reserved", "inactive", "pending"]
STATES: tuple[State, ...] = ("finished", "evicted", "admitted", "reserved", "inactive", "pending")
QuotaState = t.Literal["admitted", "reserved", "pending"]
QUOTA_STATES: tuple[QuotaState, ...] = ("admitted", "reserved", "pending")

# pkg/scheduler/preemption writes "Preempted to accommodate a workload (UID: <uid>, JobUID: ...)".
_PREEMPTOR_UID = re.compile(r"accommodate a workload \(UID: ([^,)\s]+)")


def state(wl: Json) -> State:
    """What a person is shown: finished, evicted, admitted, reserved (quota held, admission
    checks pending), inactive (spec.active false) or pending."""
    if conditions.is_true(wl, FINISHED):
        return "finished"
    if conditions.is_true(wl, EVICTED):
        return "evicted"
    if conditions.is_true(wl, ADMITTED):
        return "admitted"
    if conditions.is_true(wl, QUOTA_RESERVED):
        return "reserved"
    if (wl.get("spec") or {}).get("active") is False:
        return "inactive"
    return "pending"


def finished(wl: Json) -> bool:
    return conditions.is_true(wl, FINISHED)


def quota_state(wl: Json) -> QuotaState:
    """The state as the ClusterQueue's quota sees it: what holds a reservation is admitted or
    reserved (even while being evicted), the rest is pending."""
    if not conditions.is_true(wl, QUOTA_RESERVED):
        return "pending"
    return "admitted" if conditions.is_true(wl, ADMITTED) else "reserved"


def reserved_at(wl: Json) -> str:
    """When quota was reserved (RFC 3339), "" when it holds none."""
    cond = conditions.condition(wl, QUOTA_RESERVED)
    return str(cond.get("lastTransitionTime", "")) if cond.get("status") == "True" else ""


def priority(wl: Json) -> int:
    return int((wl.get("spec") or {}).get("priority") or 0)


def cluster_queue(wl: Json) -> str | None:
    """The ClusterQueue that admitted it (status.admission), if any."""
    return ((wl.get("status") or {}).get("admission") or {}).get("clusterQueue")


def local_queue(wl: Json) -> str | None:
    """The LocalQueue it was submitted to (spec.queueName)."""
    return (wl.get("spec") or {}).get("queueName")


def cluster_queue_of(wl: Json, targets: t.Mapping[tuple[str, str], str]) -> str | None:
    """The ClusterQueue a Workload is in: the one that reserved quota for it, else the one its
    LocalQueue points at (`targets`: (namespace, LocalQueue) -> ClusterQueue)."""
    if conditions.is_true(wl, QUOTA_RESERVED) and (admitted_by := cluster_queue(wl)):
        return admitted_by
    namespace = str((wl.get("metadata") or {}).get("namespace", ""))
    return targets.get((namespace, local_queue(wl) or ""))


def usage(wl: Json) -> dict[Cell, Decimal]:
    """What a Workload holding quota uses of each (flavor, resource), over its pod sets."""
    if not conditions.is_true(wl, QUOTA_RESERVED):
        return {}
    out: dict[Cell, Decimal] = {}
    admission = (wl.get("status") or {}).get("admission") or {}
    for assignment in admission.get("podSetAssignments") or []:
        flavors = assignment.get("flavors") or {}
        for resource, amount in (assignment.get("resourceUsage") or {}).items():
            if resource in flavors:
                cell = (flavors[resource], resource)
                out[cell] = out.get(cell, Decimal(0)) + parse(amount).value
    return out


def evicted_by_preemption(wl: Json) -> bool:
    """Preempted, by either condition Kueue records (Preempted, or Evicted for Preempted)."""
    return conditions.is_true(wl, PREEMPTED) or conditions.reason(wl, EVICTED) == "Preempted"


def preemptor_uid(wl: Json) -> str | None:
    """The UID of the Workload that preempted this one, from its Preempted condition."""
    return preemptor_uid_in(conditions.condition(wl, PREEMPTED).get("message") or "")


def preemptor_uid_in(message: str) -> str | None:
    """The preemptor's UID in a preemption message (the condition's, or the Event's)."""
    found = _PREEMPTOR_UID.search(message)
    return found.group(1) if found else None


def _owner_job(wl: Json) -> Json:
    refs = (wl.get("metadata") or {}).get("ownerReferences") or []
    return next((r for r in refs if r.get("kind") == "Job"), {})


def owner_job(wl: Json) -> str | None:
    """The name of the Job a Workload was made for."""
    return _owner_job(wl).get("name")


def owner_uid(wl: Json) -> str | None:
    return _owner_job(wl).get("uid")


T = t.TypeVar("T")


def victim_order(
    holders: t.Iterable[T], *, priority: t.Callable[[T], int], since: t.Callable[[T], str]
) -> list[T]:
    """Kueue's order of preemption candidates within a queue: lowest priority first, then the
    most recently reserved."""
    ordered = sorted(holders, key=since, reverse=True)
    ordered.sort(key=priority)
    return ordered


def transitioned_at(wl: Json, kind: str) -> str:
    """When condition `kind` last became True (RFC 3339, 1 s resolution), "" when it is not."""
    cond = conditions.condition(wl, kind)
    return str(cond.get("lastTransitionTime", "")) if cond.get("status") == "True" else ""


def preemption_reason(wl: Json) -> str | None:
    """Why it was last preempted (the Preempted condition's reason: InClusterQueue,
    InCohortReclamation, InCohortReclaimWhileBorrowing, InCohortFairSharing)."""
    return conditions.reason(wl, PREEMPTED) if evicted_by_preemption(wl) else None


def preemptions(wl: Json) -> int:
    """How many times it was preempted, from status.schedulingStats.evictions: Kueue counts each
    eviction there, so one that came and went between two reads is still counted. (Its
    `underlyingCause` is empty for preemptions in v0.17: the cause is in the Preempted
    condition only, while it lasts.)"""
    stats = ((wl.get("status") or {}).get("schedulingStats") or {}).get("evictions") or []
    return sum(int(e.get("count") or 0) for e in stats if e.get("reason") == "Preempted")


def pod_requests(wl: Json) -> tuple[int, dict[str, Decimal], bool]:
    """Its pod count, the requests of one pod of its first pod set (summed over containers),
    and whether it has more than one pod set (whose pods then differ)."""
    pod_sets = (wl.get("spec") or {}).get("podSets") or []
    if not pod_sets:
        return 0, {}, False
    count = sum(int(p.get("count") or 0) for p in pod_sets)
    spec = ((pod_sets[0].get("template") or {}).get("spec")) or {}
    per_pod: dict[str, Decimal] = {}
    for container in spec.get("containers") or []:
        for name, amount in ((container.get("resources") or {}).get("requests") or {}).items():
            per_pod[name] = per_pod.get(name, Decimal(0)) + parse(amount).value
    return count, per_pod, len(pod_sets) > 1


PriorityUse = t.Literal["workload", "pod"]  # a WorkloadPriorityClass, or a pod PriorityClass


def priority_class(obj: Json) -> tuple[PriorityUse, str] | None:
    """The priority class a Workload or a Job was given, and its kind: "workload" for a
    WorkloadPriorityClass, "pod" for a pod PriorityClass; None for none. A Workload says it in
    either served shape (v1beta2 `priorityClassRef`; v1beta1 `priorityClassName` with its
    `priorityClassSource`), a Job of any integrated kind by its label PRIORITY_LABEL (which
    names a WorkloadPriorityClass)."""
    spec = obj.get("spec") or {}
    ref = spec.get("priorityClassRef") or {}
    if ref.get("name"):
        kind = ref.get("kind", "WorkloadPriorityClass")
        return ("workload" if kind == "WorkloadPriorityClass" else "pod"), str(ref["name"])
    if spec.get("priorityClassName"):
        source = spec.get("priorityClassSource")
        use: PriorityUse = "workload" if source == WORKLOAD_PRIORITY_SOURCE else "pod"
        return use, str(spec["priorityClassName"])
    label = ((obj.get("metadata") or {}).get("labels") or {}).get(PRIORITY_LABEL)
    return ("workload", str(label)) if label else None


def workload_priority_class(wl: Json) -> str | None:
    """The WorkloadPriorityClass it was given (either shape); None for a pod PriorityClass or
    none."""
    found = priority_class(wl)
    return found[1] if found and found[0] == "workload" else None
