"""Checks that follow admitted Jobs down to their Pods: where they run, and how preempted work
comes back. They need nodes (a sandbox's are simulated by kwok) and are skipped without any.

- placement: a Job that names no node selector (it only tolerates the flavor's taints) lands
  only on nodes of the flavor Kueue assigned it, by the nodeLabels Kueue gives its Pods, and
  completes;
- victim recovery: low-priority Jobs that borrow are preempted when the lender reclaims its
  quota; each victim's Pods are terminated, it is admitted again once the preemptor finished,
  and it completes exactly once (Job succeeded equals completions, one Pod succeeded).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from auditor import rules
from auditor.k8s import conditions
from auditor.k8s.objects import Json
from auditor.kueue import capacity
from auditor.kueue.cohorts import cohort_of
from auditor.kueue.quota import BORROWING, NOMINAL
from auditor.kueue.workloads import FINISHED, QUOTA_RESERVED, evicted_by_preemption, owner_job
from auditor.verify import readings
from auditor.verify.model import Check, Probe, ScratchTenant
from auditor.verify.scratch import Scratch

_RULES = rules.of(__name__)
VERIFY_POD_PLACEMENT = _RULES["verify-pod-placement"]
VERIFY_VICTIM_RECOVERY = _RULES["verify-victim-recovery"]

RUN_SECONDS = 3  # how long a placement probe runs
VICTIM_SECONDS = 20  # long enough to be preempted while running
PREEMPTOR_SECONDS = 5
_TERMINAL = ("Succeeded", "Failed")


def nodes(scratch: Scratch) -> list[Json]:
    return [n for n in scratch.cluster.list("v1", "Node") if capacity.ready(n)]


def pods_of(scratch: Scratch, namespace: str, job: str) -> list[Json]:
    return [
        p
        for p in scratch.cluster.list_in("v1", "Pod", namespace)
        if any(r.get("name") == job for r in p["metadata"].get("ownerReferences") or [])
    ]


def _job(scratch: Scratch, namespace: str, name: str) -> Json:
    return scratch.cluster.get("batch/v1", "Job", name, namespace)


def _succeeded(job: Json) -> bool:
    return int((job.get("status") or {}).get("succeeded") or 0) >= int(
        (job.get("spec") or {}).get("completions") or 1
    )


def check_placement(
    scratch: Scratch, tenant: ScratchTenant, probe: Probe, low: str | None
) -> Check:
    ready = nodes(scratch)
    if not ready:
        return Check(VERIFY_POD_PLACEMENT, None, "not checked: the cluster has no Ready node")
    [job] = scratch.submit(tenant, probe, 1, low, "placed", run_for=RUN_SECONDS, pinned=False)
    scratch.held_within_deadline(lambda: _succeeded(_job(scratch, tenant.namespace, job)))
    [found] = scratch.workloads(tenant.namespace, [job]) or [{}]
    assigned = _flavor(found, probe.resource)
    flavor = scratch.cluster.get(scratch.kueue, "ResourceFlavor", assigned) if assigned else {}
    by_name = {n["metadata"]["name"]: n for n in ready}
    pods = pods_of(scratch, tenant.namespace, job)
    bound = {str(p["metadata"]["name"]): p["spec"].get("nodeName") for p in pods}
    wrong = {
        pod: node
        for pod, node in bound.items()
        if not node or node not in by_name or not capacity.selects(flavor, by_name[node])
    }
    completed = _succeeded(_job(scratch, tenant.namespace, job))
    where = ", ".join(f"{pod} on {node or 'no node'}" for pod, node in sorted(bound.items()))
    return Check(
        VERIFY_POD_PLACEMENT,
        bool(assigned) and bool(pods) and not wrong and completed,
        f"a Job naming no node was assigned flavor {assigned or 'NONE'}; its Pod(s) "
        f"{where or 'NONE'}"
        + (f"; NOT on a node of {assigned}: {sorted(wrong)}" if wrong else "")
        + f"; the Job {'completed' if completed else 'did NOT complete'}",
        tenant.cq_name,
        readings.observed([found]),
    )


def _flavor(workload: Json, resource: str) -> str | None:
    admission = (workload.get("status") or {}).get("admission") or {}
    for assignment in admission.get("podSetAssignments") or []:
        found = (assignment.get("flavors") or {}).get(resource)
        if found:
            return str(found)
    return None


@dataclass
class _Victim:
    job: str
    evicted_at: float | None = None
    released: bool = False  # its reservation was taken back after the eviction
    stopped: bool = False  # seen evicted with no Pod left running
    readmitted: str = ""  # QuotaReserved's time when admitted again


@dataclass
class _Run:
    victims: dict[str, _Victim]
    preemptor_finished: str = ""
    seen: list[Json] = field(default_factory=list)


def check_victim_recovery(
    scratch: Scratch,
    tenant: ScratchTenant,
    peers: list[ScratchTenant],
    probe: Probe,
    low: str | None,
    high: str | None,
) -> Check:
    peer = next(
        (p for p in peers if cohort_of(p.cq) and cohort_of(p.cq) == cohort_of(tenant.cq)), None
    )
    policy = (peer.cq["spec"].get("preemption") or {}) if peer else {}
    why = (
        "the cluster has no Ready node"
        if not nodes(scratch)
        else "fewer than two WorkloadPriorityClasses with different values"
        if not (low and high)
        else "no other tenant's ClusterQueue shares the cohort"
        if peer is None
        else f"ClusterQueue {peer.cq_name} never reclaims"
        if policy.get("reclaimWithinCohort", "Never") == "Never"
        else None
    )
    if why or peer is None:
        return Check(VERIFY_VICTIM_RECOVERY, None, f"not checked: {why}", tenant.cq_name)
    lending = scratch.lendable(tenant.cq, probe)
    quota = readings.quota(tenant.cq, probe)
    borrow = 0
    if lending is not None:
        ceiling = quota.get(BORROWING)
        borrow = probe.units(lending[1] if ceiling is None else min(ceiling, lending[1]))
    count = probe.units(quota[NOMINAL] - readings.usage(tenant.cq, probe)) + borrow
    jobs = scratch.submit(tenant, probe, count, low, "victim", run_for=VICTIM_SECONDS)
    scratch.wait_settled(tenant.namespace, jobs, want_admitted=True)
    size = readings.quota(peer.cq, probe)[NOMINAL]
    [preemptor] = scratch.submit(
        peer, probe, 1, high, "reclaimer", amount=size, run_for=PREEMPTOR_SECONDS
    )
    run = _follow(scratch, tenant, peer, jobs, preemptor)
    evicted = [v for v in run.victims.values() if v.evicted_at is not None]
    outcomes = {j: _outcome(scratch, tenant.namespace, j) for j in jobs}
    once = [j for j, (done, pods) in outcomes.items() if done and pods == 1]
    late = [v.job for v in evicted if not v.readmitted or v.readmitted < run.preemptor_finished]
    ok = bool(evicted) and all(v.stopped for v in evicted) and not late and len(once) == len(jobs)
    return Check(
        VERIFY_VICTIM_RECOVERY,
        ok and bool(run.preemptor_finished),
        f"{len(evicted)} of {len(jobs)} borrowing low-priority Job(s) preempted by a "
        f"priority Job in {peer.cq_name}; {sum(v.stopped for v in evicted)} had their Pods "
        f"terminated; {len(evicted) - len(late)} re-admitted after the preemptor "
        + ("finished" if run.preemptor_finished else "(which did NOT finish)")
        + f"; {len(once)} of {len(jobs)} completed exactly once"
        + "".join(
            f"; {j}: succeeded={done}, {pods} Pod(s) succeeded"
            for j, (done, pods) in sorted(outcomes.items())
            if j not in once
        ),
        tenant.cq_name,
        readings.observed(run.seen),
    )


def _follow(
    scratch: Scratch, tenant: ScratchTenant, peer: ScratchTenant, jobs: list[str], preemptor: str
) -> _Run:
    """Watch the victims and the preemptor until every Job is done (or the time is up)."""
    run = _Run({j: _Victim(j) for j in jobs})
    deadline = time.monotonic() + scratch.timeout + VICTIM_SECONDS * 2 + PREEMPTOR_SECONDS
    while time.monotonic() < deadline:
        mine = {owner_job(w): w for w in scratch.workloads(tenant.namespace, jobs)}
        pods = scratch.cluster.list_in("v1", "Pod", tenant.namespace)
        for job, victim in run.victims.items():
            w = mine.get(job) or {}
            if victim.evicted_at is None and evicted_by_preemption(w):
                victim.evicted_at = time.monotonic()
                run.seen.append(w)
            if victim.evicted_at is None:
                continue
            if not conditions.is_true(w, QUOTA_RESERVED):
                victim.released = True
                victim.stopped |= not [p for p in pods if _owned(p, job) and _running(p)]
            elif victim.released and not victim.readmitted:
                reserved = conditions.condition(w, QUOTA_RESERVED)
                victim.readmitted = str(reserved.get("lastTransitionTime", ""))
        [top] = scratch.workloads(peer.namespace, [preemptor]) or [{}]
        if conditions.is_true(top, FINISHED):
            run.preemptor_finished = str(
                conditions.condition(top, FINISHED).get("lastTransitionTime")
            )
        if run.preemptor_finished and all(conditions.is_true(w, FINISHED) for w in mine.values()):
            run.seen.append(top)
            break
        time.sleep(0.25)
    return run


def _running(pod: Json) -> bool:
    return (pod.get("status") or {}).get("phase") not in _TERMINAL


def _owned(pod: Json, job: str) -> bool:
    return any(r.get("name") == job for r in pod["metadata"].get("ownerReferences") or [])


def _outcome(scratch: Scratch, namespace: str, job: str) -> tuple[bool, int]:
    """Whether the Job succeeded, and how many of its Pods did."""
    succeeded = [
        p for p in pods_of(scratch, namespace, job) if p["status"].get("phase") == "Succeeded"
    ]
    return _succeeded(_job(scratch, namespace, job)), len(succeeded)
