"""The scenarios of a verify run, each submitting probe Jobs and judging what Kueue did."""

from __future__ import annotations

import time
import typing as t
from dataclasses import dataclass

from auditor import rules
from auditor.errors import ConfigError
from auditor.k8s import quantity
from auditor.k8s.conditions import is_false, is_true, message, reason
from auditor.k8s.objects import Json
from auditor.kueue.cohorts import cohort_of
from auditor.kueue.quota import BORROWING, NOMINAL
from auditor.kueue.stop_policy import HOLD
from auditor.kueue.workloads import (
    ADMITTED,
    EVICTED,
    PREEMPTED,
    QUOTA_RESERVED,
    evicted_by_preemption,
    owner_job,
)
from auditor.repo.profiles import TenantProfile
from auditor.speed import threads
from auditor.verify import pods, readings
from auditor.verify.model import Check, Probe, ScratchTenant
from auditor.verify.scratch import Scratch

_RULES = rules.of(__name__)
VERIFY_BORROWING_LIMIT = _RULES["verify-borrowing-limit"]
VERIFY_NOMINAL_QUOTA = _RULES["verify-nominal-quota"]
VERIFY_PREEMPTION = _RULES["verify-preemption"]
VERIFY_STOP_POLICY_HOLD = _RULES["verify-stop-policy-hold"]
VERIFY_UNLABELLED_NAMESPACE = _RULES["verify-unlabelled-namespace"]
VERIFY_UNQUEUED_JOB_HELD = _RULES["verify-unqueued-job-held"]

JOB = "batch.kubernetes.io/job-name"  # the label the Job controller puts on its Pods


def run_all(
    scratch: Scratch, profiles: list[TenantProfile], watch_seconds: int, hold_seconds: float
) -> list[Check]:
    tenants = scratch.make_tenants(profiles)
    if not tenants:
        raise ConfigError(
            f"cluster {scratch.profile.name}: no tenant profile names a ClusterQueue on it; "
            "verify needs one to probe"
        )
    first = tenants[0]
    probe = scratch.size_probe(first.cq)
    low, high = scratch.priorities()
    checks = [*check_quota(scratch, first, probe, low)]
    checks.append(check_preemption(scratch, first, tenants[1:], probe, low, high))
    scratch.clear(first, *tenants[1:])
    checks.append(check_stop_policy(scratch, first, probe, low, hold_seconds))
    scratch.clear(first)
    checks.append(check_unlabelled(scratch, first, probe, low, watch_seconds))
    scratch.clear(first)
    checks.append(check_unqueued(scratch, first, probe, watch_seconds))
    scratch.clear(first)
    checks.append(pods.check_placement(scratch, first, probe, low))
    scratch.clear(first)
    checks.append(pods.check_victim_recovery(scratch, first, tenants[1:], probe, low, high))
    return checks


def check_quota(
    scratch: Scratch, tenant: ScratchTenant, probe: Probe, low: str | None
) -> list[Check]:
    quota = readings.quota(tenant.cq, probe)
    used = readings.usage(tenant.cq, probe)
    nominal_jobs = probe.units(quota[NOMINAL] - used)
    within = scratch.submit(tenant, probe, nominal_jobs, low, "nominal")
    seen = scratch.wait_settled(tenant.namespace, within)
    admitted = [w for w in seen if is_true(w, QUOTA_RESERVED)]
    borrowed = readings.borrowed(scratch.cq_reserving(tenant, len(admitted)), probe)
    nominal = Check(
        VERIFY_NOMINAL_QUOTA,
        len(admitted) == nominal_jobs and borrowed.value == 0,
        f"{len(admitted)} of {nominal_jobs} Jobs of {probe.unit} {probe.resource} within "
        f"the nominal quota {quota[NOMINAL]} of flavor {probe.flavor} admitted, "
        f"borrowing {borrowed}",
        tenant.cq_name,
        readings.observed(seen),
    )
    lending = scratch.lendable(tenant.cq, probe)
    if lending is None:
        return [
            nominal,
            Check(
                VERIFY_BORROWING_LIMIT,
                None,
                f"ClusterQueue {tenant.cq_name} is in no cohort: there is nothing to borrow",
                tenant.cq_name,
            ),
        ]
    tree, lendable = lending
    ceiling = quota.get(BORROWING)
    borrow_jobs = probe.units(lendable if ceiling is None else min(ceiling, lendable))
    extra = scratch.submit(tenant, probe, borrow_jobs + 1, low, "borrow")
    seen = scratch.wait_settled(tenant.namespace, within + extra)
    admitted = [w for w in seen if is_true(w, QUOTA_RESERVED)]
    pending = [w for w in seen if is_false(w, QUOTA_RESERVED)]
    borrowed = readings.borrowed(scratch.cq_reserving(tenant, len(admitted)), probe)
    expected = probe.unit.value * borrow_jobs
    ok = (
        len(admitted) == nominal_jobs + borrow_jobs
        and len(pending) == 1
        and borrowed.value == expected
    )
    return [
        nominal,
        Check(
            VERIFY_BORROWING_LIMIT,
            ok,
            f"{len(admitted)} of {nominal_jobs + borrow_jobs + 1} Jobs admitted, borrowing "
            f"{borrowed} {probe.resource} (expected {quantity.Quantity(expected)}: "
            f"borrowingLimit {ceiling or 'unset'}, the rest of cohort tree {tree} can lend "
            f"{lendable}); "
            f"{len(pending)} beyond it pending with QuotaReserved=False (expected 1)",
            tenant.cq_name,
            readings.observed(seen),
        ),
    ]


def check_preemption(
    scratch: Scratch,
    tenant: ScratchTenant,
    peers: list[ScratchTenant],
    probe: Probe,
    low: str | None,
    high: str | None,
) -> Check:
    """A high-priority Job reclaims quota in the cohort (or preempts within the queue)."""
    peer = next(
        (p for p in peers if cohort_of(p.cq) and cohort_of(p.cq) == cohort_of(tenant.cq)), None
    )
    initiator_side = peer or tenant
    policy = initiator_side.cq["spec"].get("preemption") or {}
    allowed = (
        policy.get("reclaimWithinCohort", "Never") != "Never"
        if peer
        else policy.get("withinClusterQueue", "Never") != "Never"
    )
    if not (low and high) or not allowed:
        why = (
            "fewer than two WorkloadPriorityClasses with different values"
            if not (low and high)
            else f"ClusterQueue {initiator_side.cq_name} never preempts"
        )
        return Check(VERIFY_PREEMPTION, None, f"not checked: {why}", tenant.cq_name)
    size = readings.quota(initiator_side.cq, probe)[NOMINAL] if peer else probe.unit
    jobs = scratch.submit(initiator_side, probe, 1, high, "preemptor", amount=size)
    deadline = time.monotonic() + scratch.timeout
    initiator: Json = {}
    while time.monotonic() < deadline:
        [initiator] = scratch.workloads(initiator_side.namespace, jobs) or [{}]
        if initiator and is_true(initiator, QUOTA_RESERVED):
            break
        time.sleep(0.25)
    everything = scratch.workloads(tenant.namespace) + (
        scratch.workloads(peer.namespace) if peer else []
    )
    victims = [w for w in everything if evicted_by_preemption(w)]
    top = int((initiator.get("spec") or {}).get("priority") or 0)
    lower = [w for w in victims if int(w["spec"].get("priority") or 0) < top]
    # Kueue records both: Evicted (reason Preempted) and Preempted (why: the preemption kind).
    recorded = [w for w in victims if reason(w, EVICTED) == "Preempted" and is_true(w, PREEMPTED)]
    reasons = sorted({reason(w, PREEMPTED) or "?" for w in victims})
    admitted = bool(initiator) and is_true(initiator, QUOTA_RESERVED)
    where = f"in ClusterQueue {peer.cq_name}" if peer else "in the same ClusterQueue"
    return Check(
        VERIFY_PREEMPTION,
        admitted and bool(victims) and victims == lower == recorded,
        f"a priority-{top} Job {where} was {'admitted' if admitted else 'NOT admitted'}; "
        f"{len(victims)} victim(s), {len(lower)} of lower priority, {len(recorded)} with "
        f"Evicted=Preempted and Preempted={', '.join(reasons) or 'none'}",
        initiator_side.cq_name,
        readings.observed([initiator, *victims] if initiator else victims),
    )


def check_stop_policy(
    scratch: Scratch, tenant: ScratchTenant, probe: Probe, low: str | None, hold_seconds: float
) -> Check:
    running = scratch.submit(tenant, probe, 1, low, "running")
    scratch.wait_settled(tenant.namespace, running, want_admitted=True)
    scratch.set_stop_policy(tenant.cq_name, HOLD)
    scratch.require(
        lambda: reason(scratch.cq(tenant.cq_name), "Active") == "Stopped",
        f"ClusterQueue {tenant.cq_name} reporting Stopped",
    )
    held = scratch.submit(tenant, probe, 1, low, "held")
    end = time.monotonic() + hold_seconds
    admitted_while_held = False
    while time.monotonic() < end:
        admitted_while_held |= any(
            is_true(w, QUOTA_RESERVED) for w in scratch.workloads(tenant.namespace, held)
        )
        time.sleep(0.25)
    kept = scratch.workloads(tenant.namespace, running)
    kept_running = bool(kept) and all(
        is_true(w, ADMITTED) and not is_true(w, EVICTED) for w in kept
    )
    scratch.restore_stop_policy(tenant.cq_name)
    resumed = scratch.wait_settled(tenant.namespace, held, want_admitted=True)
    readmitted = bool(resumed) and all(is_true(w, QUOTA_RESERVED) for w in resumed)
    return Check(
        VERIFY_STOP_POLICY_HOLD,
        kept_running and not admitted_while_held and readmitted,
        "under stopPolicy Hold the admitted Workload "
        + ("kept running" if kept_running else "LOST its admission")
        + f", a new one was {'ADMITTED' if admitted_while_held else 'held'} for "
        f"{hold_seconds:.0f}s, and after resuming it was "
        + ("admitted" if readmitted else "NOT admitted"),
        tenant.cq_name,
        readings.observed([*kept, *resumed]),
    )


def check_unlabelled(
    scratch: Scratch, tenant: ScratchTenant, probe: Probe, low: str | None, seconds: int
) -> Check:
    key, _value = scratch.profile.admission_label
    labels = {k: v for k, v in tenant.labels.items() if k != key}
    outsider = ScratchTenant(tenant.name, tenant.cq, f"{tenant.namespace}-unlabelled", labels)
    scratch.make_namespace(outsider)
    seen = _watch(
        scratch,
        outsider.namespace,
        seconds,
        lambda: scratch.submit(outsider, probe, 1, low, "outsider"),
    )
    return Check(
        VERIFY_UNLABELLED_NAMESPACE,
        not seen.admitted and not seen.pods,
        f"a Job in namespace {outsider.namespace} (without {key}) was "
        f"{'ADMITTED' if seen.admitted else 'not admitted'} and created "
        f"{len(seen.pods)} Pod(s) in {seconds}s"
        + (f"; Kueue said {seen.reasons}" if seen.reasons and not seen.admitted else ""),
        tenant.cq_name,
        readings.observed(seen.admitted[-1:] or seen.workloads),
    )


def check_unqueued(scratch: Scratch, tenant: ScratchTenant, probe: Probe, seconds: int) -> Check:
    """Behind the queue-name policy, Kueue itself holds a Job that names no LocalQueue.

    The scratch namespace carries the tenant namespace's labels, so Kueue manages it the same
    way, and verify's run label, which the admission policies leave out: the live boundary is
    never lifted for the probe (a GitOps controller would put it back mid-probe, and every
    tenant would be without it meanwhile).
    """
    seen = _watch(
        scratch,
        tenant.namespace,
        seconds,
        lambda: scratch.submit(tenant, probe, 1, None, "unqueued", queued=False),
    )
    job = scratch.cluster.get("batch/v1", "Job", seen.jobs[0], tenant.namespace)
    held = bool((job.get("spec") or {}).get("suspend"))
    return Check(
        VERIFY_UNQUEUED_JOB_HELD,
        held and not seen.admitted and not seen.pods,
        f"a Job without a queue name, created unsuspended in namespace {tenant.namespace} "
        f"(labelled as {tenant.name}'s), was {'held suspended' if held else 'NOT suspended'} "
        f"by Kueue and created {len(seen.pods)} Pod(s) in {seconds}s"
        + (f" (Kueue: {seen.reasons})" if seen.reasons else " (Kueue made no Workload)"),
        tenant.cq_name,
        readings.observed(seen.admitted[-1:] or seen.workloads),
    )


@dataclass(frozen=True)
class Watched:
    """What a namespace showed of the probe Jobs submitted while it was watched."""

    jobs: list[str]
    workloads: list[Json]  # the last state of each
    admitted: list[Json]  # admitted at any moment of the watch, even if undone later
    pods: list[str]

    @property
    def reasons(self) -> str:
        return "; ".join(
            sorted(
                {
                    f"{reason(w, QUOTA_RESERVED)}: {message(w, QUOTA_RESERVED)}"
                    for w in self.workloads
                }
            )
        )


def _watch(
    scratch: Scratch, namespace: str, seconds: int, submit: t.Callable[[], list[str]]
) -> Watched:
    """Watch `namespace` for `seconds` while `submit` makes Jobs; what became of those Jobs."""
    # A watch opens with the objects that exist, so none is missed if it opens late.
    jobs, (workloads, pods) = threads.meanwhile(
        [
            lambda: scratch.cluster.watch(
                scratch.kueue, "Workload", namespace=namespace, seconds=seconds
            ),
            lambda: scratch.cluster.watch("v1", "Pod", namespace=namespace, seconds=seconds),
        ],
        submit,
    )
    events = [e["object"] for e in workloads if e.get("type") != "ERROR"]
    pod_events = [e["object"] for e in pods if e.get("type") != "ERROR"]
    # Only what the submitted Jobs made: an earlier probe's Pods may still be terminating.
    events = [w for w in events if owner_job(w) in jobs]
    pod_events = [p for p in pod_events if (p["metadata"].get("labels") or {}).get(JOB) in jobs]
    return Watched(
        jobs,
        list({w["metadata"]["name"]: w for w in events}.values()),
        [w for w in events if is_true(w, QUOTA_RESERVED) or is_true(w, ADMITTED)],
        sorted({p["metadata"]["name"] for p in pod_events}),
    )
