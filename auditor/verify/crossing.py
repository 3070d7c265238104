"""Probes that try to cross the tenant boundaries, acting as a tenant.

A probe acts as a member of a tenant's identity-provider group (the user
`kueue-gitops-probe:<tenant>` in that group), through the verifying identity's own credentials
and the Impersonate-User / Impersonate-Group headers (that identity needs `impersonate`), in the
tenant's own namespace as the repository declares it. Each check reports PASS or FAIL with the
API server's or Kueue's own words:

- job-without-queue: a Job without `kueue.x-k8s.io/queue-name` is refused by the API server;
- undeclared-queue: a Job naming a LocalQueue the namespace does not declare (one that does not
  exist, and another tenant's) is refused;
- unapproved-priority: a Job with a priority level or pod PriorityClass the tenant is not
  approved for is refused; approved-priority: one with approved levels is accepted and admitted;
- namespace-relabel: relabelling its namespace is refused, and still refused by the admission
  policy after the probe grants the tenant `patch` on it through a temporary RoleBinding;
- platform-objects: creating or patching ClusterQueues, ResourceFlavors, Cohorts,
  WorkloadPriorityClasses and PriorityClasses is forbidden.

Whatever needs nothing to exist is asked with dryRun=All (admission and authorization still
run), so a missing boundary lets nothing through; what must exist (the admitted Job, the held
Job, the temporary Role) is deleted again, and `boundary-cleanup` checks that it is gone.
"""

from __future__ import annotations

from auditor import rules
from auditor.errors import ClusterAccessError
from auditor.k8s.conditions import is_true, message, reason
from auditor.k8s.objects import SCHEDULING_API, Json
from auditor.kueue import admission
from auditor.kueue.workloads import PRIORITY_LABEL, QUEUE_LABEL, QUOTA_RESERVED
from auditor.live.apierrors import Forbidden
from auditor.repo.profiles import TenantProfile
from auditor.verify import readings
from auditor.verify.actor import (
    MISSING_QUEUE,
    ActingTenant,
    Actor,
    attempt,
    by_policy,
    outcome,
    words_of,
)
from auditor.verify.model import Check
from auditor.verify.scratch import Scratch

_RULES = rules.of(__name__)
VERIFY_APPROVED_PRIORITY = _RULES["verify-approved-priority"]
VERIFY_BOUNDARY_CLEANUP = _RULES["verify-boundary-cleanup"]
VERIFY_JOB_WITHOUT_QUEUE = _RULES["verify-job-without-queue"]
VERIFY_NAMESPACE_RELABEL = _RULES["verify-namespace-relabel"]
VERIFY_PLATFORM_OBJECTS = _RULES["verify-platform-objects"]
VERIFY_UNAPPROVED_PRIORITY = _RULES["verify-unapproved-priority"]
VERIFY_UNDECLARED_QUEUE = _RULES["verify-undeclared-queue"]


def pick(
    cluster: str, boundaries: admission.Boundaries, tenants: list[TenantProfile]
) -> ActingTenant | None:
    """The first tenant with a group and a namespace here that declares a LocalQueue."""
    groups = {p.name: p.group for p in tenants if p.group}
    for ns in boundaries.namespaces:
        if ns.tenant in groups and ns.queues:
            others = [
                cq
                for p in tenants
                if p.name != ns.tenant and cluster in p.clusters
                for cq in p.clusters[cluster].cluster_queues
            ]
            return ActingTenant(
                ns.tenant,
                groups[ns.tenant],
                ns.name,
                ns.queues,
                ns.workload_levels,
                ns.pod_levels,
                tuple(others),
            )
    return None


def run_all(
    scratch: Scratch,
    boundaries: admission.Boundaries,
    tenants: list[TenantProfile],
    watch_seconds: int,
) -> list[Check]:
    tenant = pick(scratch.profile.name, boundaries, tenants)
    if tenant is None:
        why = "no tenant with an identity-provider group has a LocalQueue on this cluster"
        return [Check(VERIFY_JOB_WITHOUT_QUEUE, None, f"boundaries not probed: {why}")]
    probes = Crossing(scratch, tenant)
    checks: list[Check] = []
    try:
        checks.append(probes.job_without_queue())
        checks.append(probes.undeclared_queue())
        checks.append(probes.unapproved_priority())
        checks.append(probes.approved_priority())
        checks.append(probes.namespace_relabel())
        checks.append(probes.platform_objects())
    finally:
        checks.append(probes.cleanup())
    return checks


class Crossing:
    """The probes of one run, acting as `tenant`; remembers what it made to undo it."""

    def __init__(self, scratch: Scratch, tenant: ActingTenant) -> None:
        self.scratch = scratch
        self.admin = scratch.cluster
        self.tenant = tenant
        self.act = Actor(scratch, tenant)

    # -- the probes -------------------------------------------------------------------------

    def job_without_queue(self) -> Check:
        refused = self.act.try_job({}, dry_run=True)
        ok = by_policy(refused, admission.QUEUE_POLICY)
        return Check(
            VERIFY_JOB_WITHOUT_QUEUE,
            ok,
            f"a Job of {self.tenant.name} without a queue name in namespace "
            f"{self.tenant.namespace} {outcome(refused)}"
            + ("" if ok or refused is None else f" (not by {admission.QUEUE_POLICY})"),
        )

    def undeclared_queue(self) -> Check:
        """A queue that does not exist, and one that does but the repository does not declare
        here: a LocalQueue the probe makes in the tenant's namespace, pointing at another
        tenant's ClusterQueue, the way a tenant allowed to make queues would take its quota."""
        outcomes = [
            (
                f"{MISSING_QUEUE} (none such)",
                self.act.try_job({QUEUE_LABEL: MISSING_QUEUE}, dry_run=True),
            )
        ]
        if self.tenant.foreign_cqs:
            target = self.tenant.foreign_cqs[0]
            self.act.make_queue(target)
            try:
                words = self.act.try_job({QUEUE_LABEL: self.act.queue}, dry_run=True)
            finally:
                self.act.delete_queue()
            outcomes.append(
                (
                    f"{self.act.queue} (made live, into ClusterQueue {target} of another tenant)",
                    words,
                )
            )
        return Check(
            VERIFY_UNDECLARED_QUEUE,
            all(by_policy(words, admission.QUEUE_POLICY) for _n, words in outcomes),
            "; ".join(f"a Job naming LocalQueue {n} {outcome(w)}" for n, w in outcomes),
        )

    def unapproved_priority(self) -> Check:
        level = self.act.unapproved("WorkloadPriorityClass", self.tenant.workload_levels)
        pod = self.act.unapproved("PriorityClass", self.tenant.pod_levels, api=SCHEDULING_API)
        queue = {QUEUE_LABEL: self.tenant.queues[0]}
        by_level = self.act.try_job({**queue, PRIORITY_LABEL: level}, dry_run=True)
        by_pod = self.act.try_job(queue, dry_run=True, pod_class=pod)
        ok = by_policy(by_level, admission.PRIORITY_POLICY) and by_policy(
            by_pod, admission.PRIORITY_POLICY
        )
        return Check(
            VERIFY_UNAPPROVED_PRIORITY,
            ok,
            f"a Job of {self.tenant.name} with priority class {level} {outcome(by_level)}; "
            f"one with pod PriorityClass {pod} {outcome(by_pod)}",
        )

    def approved_priority(self) -> Check:
        queue = self.tenant.queues[0]
        labels = {QUEUE_LABEL: queue}
        if self.tenant.workload_levels:
            labels[PRIORITY_LABEL] = self.tenant.workload_levels[0]
        pod = self.tenant.pod_levels[0] if self.tenant.pod_levels else None
        cq_name = self.act.queue_target(queue)
        probe = self.scratch.size_probe(self.scratch.cq(cq_name)) if cq_name else None
        name = f"probe-approved-{self.scratch.run_id}"
        refused = self.act.try_job(labels, dry_run=False, pod_class=pod, probe=probe, name=name)
        what = (
            f"a Job with {labels.get(PRIORITY_LABEL, 'no priority class')} and pod "
            f"PriorityClass {pod or '(default)'} in LocalQueue {queue}"
        )
        if refused is not None:
            return Check(VERIFY_APPROVED_PRIORITY, False, f"{what} was REFUSED: {refused}")
        seen: list[Json] = []

        def reserved() -> bool:
            nonlocal seen
            seen = self.scratch.workloads(self.tenant.namespace, [name])
            return bool(seen) and is_true(seen[0], QUOTA_RESERVED)

        self.scratch.held_within_deadline(reserved)
        admitted = bool(seen) and is_true(seen[0], QUOTA_RESERVED)
        said = (
            f"{reason(seen[0], QUOTA_RESERVED)}: {message(seen[0], QUOTA_RESERVED)}" if seen else ""
        )
        self.act.delete_job(name)
        return Check(
            VERIFY_APPROVED_PRIORITY,
            admitted,
            f"{what} was accepted and "
            + (
                f"admitted (Kueue: {said})"
                if admitted
                else f"NOT admitted (Kueue: {said or 'no Workload'})"
            ),
            cq_name,
            readings.observed(seen),
        )

    def namespace_relabel(self) -> Check:
        ns = self.tenant.namespace
        live = self.admin.get("v1", "Namespace", ns)
        labels = (live.get("metadata") or {}).get("labels") or {}
        key = self.scratch.profile.tenant_label or self.scratch.profile.admission_label[0]
        relabel = {"metadata": {"labels": {key: f"{labels.get(key, 'none')}-moved"}}}
        before = self.act.try_patch_namespace(relabel)
        harmless = {"metadata": {"labels": {"kueue-gitops.io/probe": self.scratch.run_id}}}
        granted: list[ClusterAccessError | None] = [ClusterAccessError("not tried")]
        try:
            self.act.grant_namespace_patch()

            def took_effect() -> bool:
                granted[0] = self.act.try_patch_namespace(harmless)
                return granted[0] is None

            self.scratch.held_within_deadline(took_effect)
            after = self.act.try_patch_namespace(relabel)
        finally:
            self.act.revoke_namespace_patch()
        took = "went through" if granted[0] is None else f"was STILL refused: {granted[0]}"
        ok = (
            before is not None
            and granted[0] is None
            and by_policy(after, admission.NAMESPACE_POLICY)
        )
        return Check(
            VERIFY_NAMESPACE_RELABEL,
            ok,
            f"{self.tenant.name} changing label {key} of namespace {ns} {outcome(before)}; "
            f"granted patch on it by a temporary RoleBinding (a harmless label then {took}), "
            f"the same change {outcome(after)}",
        )

    def platform_objects(self) -> Check:
        kueue = self.scratch.kueue
        cohorts = self.scratch.api_for("Cohort")
        attempts = [
            (
                "create ClusterQueue",
                lambda: self.act.dry_create(kueue, "ClusterQueue", {"spec": {}}),
            ),
            (
                "create ResourceFlavor",
                lambda: self.act.dry_create(kueue, "ResourceFlavor", {"spec": {}}),
            ),
            (
                "create WorkloadPriorityClass",
                lambda: self.act.dry_create(kueue, "WorkloadPriorityClass", {"value": 1}),
            ),
            (
                "create PriorityClass",
                lambda: self.act.dry_create(SCHEDULING_API, "PriorityClass", {"value": 1}),
            ),
        ]
        if cohorts:  # v1alpha1 where Kueue is older than v0.11: tried where it is served
            api = cohorts
            attempts.insert(
                2, ("create Cohort", lambda: self.act.dry_create(api, "Cohort", {"spec": {}}))
            )
        cq = self.act.queue_target(self.tenant.queues[0])
        if cq:
            attempts.append(
                (f"patch ClusterQueue {cq}", lambda: self.act.dry_patch(kueue, "ClusterQueue", cq))
            )
        outcomes = [(what, attempt(fn)) for what, fn in attempts]
        allowed = [what for what, no in outcomes if not isinstance(no, Forbidden)]
        first = next((no for _w, no in outcomes if no is not None), None)
        return Check(
            VERIFY_PLATFORM_OBJECTS,
            not allowed,
            (
                f"{self.tenant.name} was forbidden to {', '.join(w for w, _ in outcomes)}"
                f" (e.g. {words_of(first) if first else ''})"
                if not allowed
                else f"{self.tenant.name} was ALLOWED to {', '.join(allowed)}"
            ),
        )

    def cleanup(self) -> Check:
        """Everything the probes made is gone."""
        problems = self.act.undo()
        return Check(
            VERIFY_BOUNDARY_CLEANUP,
            not problems,
            "; ".join(problems)
            or f"deleted the {self.act.made} Job(s) made as {self.tenant.name}, the temporary "
            "LocalQueue, Role and RoleBinding",
        )
