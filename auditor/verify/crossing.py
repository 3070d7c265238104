"""Probes that try to cross the tenant boundaries, acting as a tenant.

A probe acts as a member of a tenant's identity-provider group (the user
`kueue-gitops-probe:<tenant>` in that group), through the verifying identity's own credentials
and the Impersonate-User / Impersonate-Group headers (that identity needs `impersonate`), in the
tenant's own namespace as the repository declares it. Each check reports PASS or FAIL with the
API server's or Kueue's own words:

- job-without-queue: a Job without `kueue.x-k8s.io/queue-name` is refused by the API server;
- unqueued-job-held: with the queue-name policy's binding removed for the probe, such a Job is
  held suspended by Kueue and creates no Pod (the binding is put back, and proven back);
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

import contextlib
import time
import typing as t
from dataclasses import dataclass

from auditor.errors import ClusterAccessError
from auditor.k8s.conditions import is_true, message, reason
from auditor.k8s.objects import RBAC_GROUP, Json
from auditor.kueue import admission
from auditor.kueue.workloads import QUOTA_RESERVED
from auditor.repo.profiles import TenantProfile
from auditor.verify import workloads as wl
from auditor.verify.objects import (
    MANAGER,
    PRIORITY_LABEL,
    PROBE_IMAGE,
    QUEUE_LABEL,
    RUN_LABEL,
    Check,
    Probe,
)
from auditor.verify.scratch import Scratch

ADMISSION_API = admission.API
RBAC_API = f"{RBAC_GROUP}/v1"
DRY_RUN = [("dryRun", "All")]
MISSING_QUEUE = "kueue-gitops-no-such-queue"


@dataclass(frozen=True)
class Tenant:
    """The tenant the probes act as, and what the repository declares for it here."""

    name: str
    group: str
    namespace: str
    queues: tuple[str, ...]
    workload_levels: tuple[str, ...]
    pod_levels: tuple[str, ...]
    foreign_cqs: tuple[str, ...]  # other tenants' ClusterQueues on this cluster

    @property
    def user(self) -> str:
        return f"kueue-gitops-probe:{self.name}"


def pick(
    cluster: str, boundaries: admission.Boundaries, tenants: list[TenantProfile]
) -> Tenant | None:
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
            return Tenant(
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
        return [Check("job-without-queue", "admission", None, f"boundaries not probed: {why}")]
    probes = Crossing(scratch, tenant)
    checks: list[Check] = []
    try:
        checks.append(probes.job_without_queue())
        checks.append(probes.undeclared_queue())
        checks.append(probes.unapproved_priority())
        checks.append(probes.approved_priority())
        checks.append(probes.unqueued_job_held(watch_seconds))
        checks.append(probes.namespace_relabel())
        checks.append(probes.platform_objects())
    finally:
        checks.append(probes.cleanup())
    return checks


class Crossing:
    """The probes of one run, acting as `tenant`; remembers what it made to undo it."""

    def __init__(self, scratch: Scratch, tenant: Tenant) -> None:
        self.scratch = scratch
        self.admin = scratch.cluster
        self.tenant = tenant
        self.as_tenant = scratch.cluster.impersonating(tenant.user, [tenant.group])
        self.jobs: list[str] = []
        self.role = f"kueue-gitops-probe-{scratch.run_id}"
        self.queue = f"kueue-gitops-probe-{scratch.run_id}"  # the undeclared LocalQueue
        self.queue_made = False
        self.unbound: Json | None = None  # the queue binding, while the probe has it removed
        self.made = 0

    # -- the probes -------------------------------------------------------------------------

    def job_without_queue(self) -> Check:
        refused = self._try_job({}, dry_run=True)
        ok = _by_policy(refused, admission.QUEUE_POLICY)
        return Check(
            "job-without-queue",
            "admission",
            ok,
            f"a Job of {self.tenant.name} without a queue name in namespace "
            f"{self.tenant.namespace} {_outcome(refused)}"
            + ("" if ok or refused is None else f" (not by {admission.QUEUE_POLICY})"),
        )

    def undeclared_queue(self) -> Check:
        """A queue that does not exist, and one that does but the repository does not declare
        here: a LocalQueue the probe makes in the tenant's namespace, pointing at another
        tenant's ClusterQueue, the way a tenant allowed to make queues would take its quota."""
        outcomes = [
            (
                f"{MISSING_QUEUE} (none such)",
                self._try_job({QUEUE_LABEL: MISSING_QUEUE}, dry_run=True),
            )
        ]
        if self.tenant.foreign_cqs:
            target = self.tenant.foreign_cqs[0]
            self._make_queue(target)
            try:
                words = self._try_job({QUEUE_LABEL: self.queue}, dry_run=True)
            finally:
                self._delete_queue()
            outcomes.append(
                (f"{self.queue} (made live, into ClusterQueue {target} of another tenant)", words)
            )
        return Check(
            "undeclared-queue",
            "admission",
            all(_by_policy(words, admission.QUEUE_POLICY) for _n, words in outcomes),
            "; ".join(f"a Job naming LocalQueue {n} {_outcome(w)}" for n, w in outcomes),
        )

    def unapproved_priority(self) -> Check:
        level = self._unapproved("WorkloadPriorityClass", self.tenant.workload_levels)
        pod = self._unapproved("PriorityClass", self.tenant.pod_levels, api="scheduling.k8s.io/v1")
        queue = {QUEUE_LABEL: self.tenant.queues[0]}
        by_level = self._try_job({**queue, PRIORITY_LABEL: level}, dry_run=True)
        by_pod = self._try_job(queue, dry_run=True, pod_class=pod)
        ok = _by_policy(by_level, admission.PRIORITY_POLICY) and _by_policy(
            by_pod, admission.PRIORITY_POLICY
        )
        return Check(
            "unapproved-priority",
            "priority",
            ok,
            f"a Job of {self.tenant.name} with priority class {level} {_outcome(by_level)}; "
            f"one with pod PriorityClass {pod} {_outcome(by_pod)}",
        )

    def approved_priority(self) -> Check:
        queue = self.tenant.queues[0]
        labels = {QUEUE_LABEL: queue}
        if self.tenant.workload_levels:
            labels[PRIORITY_LABEL] = self.tenant.workload_levels[0]
        pod = self.tenant.pod_levels[0] if self.tenant.pod_levels else None
        cq_name = self._queue_target(queue)
        probe = self.scratch.size_probe(self.scratch.cq(cq_name)) if cq_name else None
        name = f"probe-approved-{self.scratch.run_id}"
        refused = self._try_job(labels, dry_run=False, pod_class=pod, probe=probe, name=name)
        what = (
            f"a Job with {labels.get(PRIORITY_LABEL, 'no priority class')} and pod "
            f"PriorityClass {pod or '(default)'} in LocalQueue {queue}"
        )
        if refused is not None:
            return Check("approved-priority", "priority", False, f"{what} was REFUSED: {refused}")
        seen: list[Json] = []

        def reserved() -> bool:
            nonlocal seen
            seen = self.scratch.workloads(self.tenant.namespace, [name])
            return bool(seen) and is_true(seen[0], QUOTA_RESERVED)

        self.scratch.wait_for(reserved, quiet=True)
        admitted = bool(seen) and is_true(seen[0], QUOTA_RESERVED)
        said = (
            f"{reason(seen[0], QUOTA_RESERVED)}: {message(seen[0], QUOTA_RESERVED)}" if seen else ""
        )
        self._delete_job(name)
        return Check(
            "approved-priority",
            "priority",
            admitted,
            f"{what} was accepted and "
            + (
                f"admitted (Kueue: {said})"
                if admitted
                else f"NOT admitted (Kueue: {said or 'no Workload'})"
            ),
            cq_name,
            wl.observed(seen),
        )

    def unqueued_job_held(self, seconds: int) -> Check:
        """Without the queue-name binding, Kueue itself holds a Job that names no queue."""
        name = f"probe-unqueued-{self.scratch.run_id}"
        try:
            self._unbind()
            refused = self._try_job({}, dry_run=False, name=name)
            if refused is not None:
                return Check(
                    "unqueued-job-held",
                    "admission",
                    False,
                    f"with the binding {admission.QUEUE_POLICY} removed, a Job without a "
                    f"queue name could not be created to watch: {refused}",
                )
            pods = self.admin.watch("v1", "Pod", namespace=self.tenant.namespace, seconds=seconds)
            started = [
                e["object"]["metadata"]["name"]
                for e in pods
                if (e.get("object", {}).get("metadata", {}).get("labels") or {}).get(
                    "batch.kubernetes.io/job-name"
                )
                == name
            ]
            job = self.admin.get("batch/v1", "Job", name, self.tenant.namespace)
            suspended = bool((job.get("spec") or {}).get("suspend"))
            seen = self.scratch.workloads(self.tenant.namespace, [name])
            said = (
                f"{reason(seen[0], QUOTA_RESERVED)}: {message(seen[0], QUOTA_RESERVED)}"
                if seen
                else "no Workload"
            )
        finally:
            with contextlib.suppress(ClusterAccessError):
                self._delete_job(name)
            self._rebind()
        return Check(
            "unqueued-job-held",
            "admission",
            suspended and not started,
            f"with the binding {admission.QUEUE_POLICY} removed, a Job without a queue name "
            f"was {'held suspended' if suspended else 'NOT suspended'} by Kueue and created "
            f"{len(started)} Pod(s) in {seconds}s (Kueue: {said})",
            None,
            wl.observed(seen),
        )

    def namespace_relabel(self) -> Check:
        ns = self.tenant.namespace
        live = self.admin.get("v1", "Namespace", ns)
        labels = (live.get("metadata") or {}).get("labels") or {}
        key = self.scratch.profile.tenant_label or self.scratch.profile.admission_label[0]
        relabel = {"metadata": {"labels": {key: f"{labels.get(key, 'none')}-moved"}}}
        before = self._try_patch_namespace(relabel)
        harmless = {"metadata": {"labels": {"kueue-gitops.io/probe": self.scratch.run_id}}}
        granted: list[str | None] = ["not tried"]
        try:
            self._grant_namespace_patch()

            def took_effect() -> bool:
                granted[0] = self._try_patch_namespace(harmless)
                return granted[0] is None

            self.scratch.wait_for(took_effect, quiet=True)
            after = self._try_patch_namespace(relabel)
        finally:
            self._revoke_namespace_patch()
        took = "went through" if granted[0] is None else f"was STILL refused: {granted[0]}"
        ok = (
            before is not None
            and granted[0] is None
            and _by_policy(after, admission.NAMESPACE_POLICY)
        )
        return Check(
            "namespace-relabel",
            "label",
            ok,
            f"{self.tenant.name} changing label {key} of namespace {ns} {_outcome(before)}; "
            f"granted patch on it by a temporary RoleBinding (a harmless label then {took}), "
            f"the same change {_outcome(after)}",
        )

    def platform_objects(self) -> Check:
        kueue = self.scratch.kueue
        attempts = [
            ("create ClusterQueue", lambda: self._dry_create(kueue, "ClusterQueue", {"spec": {}})),
            (
                "create ResourceFlavor",
                lambda: self._dry_create(kueue, "ResourceFlavor", {"spec": {}}),
            ),
            ("create Cohort", lambda: self._dry_create(kueue, "Cohort", {"spec": {}})),
            (
                "create WorkloadPriorityClass",
                lambda: self._dry_create(kueue, "WorkloadPriorityClass", {"value": 1}),
            ),
            (
                "create PriorityClass",
                lambda: self._dry_create("scheduling.k8s.io/v1", "PriorityClass", {"value": 1}),
            ),
        ]
        cq = self._queue_target(self.tenant.queues[0])
        if cq:
            attempts.append(
                (f"patch ClusterQueue {cq}", lambda: self._dry_patch(kueue, "ClusterQueue", cq))
            )
        outcomes = [(what, _attempt(fn)) for what, fn in attempts]
        allowed = [what for what, words in outcomes if words is None or "(403)" not in words]
        first = next((words for _w, words in outcomes if words), "")
        return Check(
            "platform-objects",
            "rbac",
            not allowed,
            (
                f"{self.tenant.name} was forbidden to {', '.join(w for w, _ in outcomes)}"
                f" (e.g. {_words(first)})"
                if not allowed
                else f"{self.tenant.name} was ALLOWED to {', '.join(allowed)}"
            ),
        )

    def cleanup(self) -> Check:
        """Everything the probes made is gone, and the queue-name binding is back."""
        problems: list[str] = []
        if self.unbound is not None:
            try:
                self._rebind()
            except ClusterAccessError as exc:
                problems.append(f"binding {admission.QUEUE_POLICY} not restored: {exc}")
        with contextlib.suppress(ClusterAccessError):
            self._revoke_namespace_patch()
        with contextlib.suppress(ClusterAccessError):
            self._delete_queue()
        for name in list(self.jobs):
            with contextlib.suppress(ClusterAccessError):
                self._delete_job(name)
        deadline = time.monotonic() + self.scratch.timeout
        left = self._left_jobs()
        while left and time.monotonic() < deadline:
            time.sleep(0.5)
            left = self._left_jobs()
        if left:
            problems.append(f"Jobs of this run still in {self.tenant.namespace}: {left}")
        made = [
            (RBAC_API, "RoleBinding", self.role),
            (RBAC_API, "Role", self.role),
            (self.scratch.kueue, "LocalQueue", self.queue),
        ]
        for api, kind, name in made:
            with contextlib.suppress(ClusterAccessError):
                self.admin.get(api, kind, name, self.tenant.namespace)
                problems.append(f"{kind} {self.tenant.namespace}/{name} still there")
        return Check(
            "boundary-cleanup",
            "other",
            not problems,
            "; ".join(problems)
            or f"deleted the {self.made} Job(s) made as {self.tenant.name}, the temporary "
            "LocalQueue, Role and RoleBinding; the queue-name binding is in place",
        )

    # -- building blocks ----------------------------------------------------------------------

    def _job(
        self, name: str, labels: dict[str, str], pod_class: str | None, probe: Probe | None
    ) -> Json:
        pod: Json = {
            "restartPolicy": "Never",
            "containers": [{"name": "probe", "image": PROBE_IMAGE}],
        }
        if probe is not None:
            request = {probe.resource: str(probe.unit)}
            pod["containers"][0]["resources"] = {"requests": request, "limits": request}
            pod["nodeSelector"], pod["tolerations"] = probe.node_selector, probe.tolerations
        if pod_class:
            pod["priorityClassName"] = pod_class
        return {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": name,
                "namespace": self.tenant.namespace,
                "labels": {**labels, RUN_LABEL: self.scratch.run_id},
            },
            "spec": {
                "backoffLimit": 0,
                "suspend": True,  # as a tenant would: Kueue unsuspends it on admission
                "template": {"metadata": {"labels": {RUN_LABEL: self.scratch.run_id}}, "spec": pod},
            },
        }

    def _try_job(
        self,
        labels: dict[str, str],
        *,
        dry_run: bool,
        pod_class: str | None = None,
        probe: Probe | None = None,
        name: str | None = None,
    ) -> str | None:
        """None when the tenant's Job was accepted; else what the API server said."""
        body = self._job(name or f"probe-{self.scratch.run_id}", labels, pod_class, probe)
        path = self.as_tenant.path("batch/v1", "Job", self.tenant.namespace)
        words = _attempt(
            lambda: self.as_tenant.request(
                "POST", path, query=DRY_RUN if dry_run else None, body=body, what="create Job"
            )
        )
        if words is None and not dry_run:
            self.jobs.append(body["metadata"]["name"])
            self.made += 1
        return words

    def _delete_job(self, name: str) -> None:
        self.admin.delete("batch/v1", "Job", name, self.tenant.namespace, propagation="Background")
        if name in self.jobs:
            self.jobs.remove(name)

    def _left_jobs(self) -> list[str]:
        return [
            j["metadata"]["name"]
            for j in self.admin.list_in("batch/v1", "Job", self.tenant.namespace)
            if (j["metadata"].get("labels") or {}).get(RUN_LABEL) == self.scratch.run_id
        ]

    def _queue_target(self, queue: str) -> str | None:
        with contextlib.suppress(ClusterAccessError):
            lq = self.admin.get(self.scratch.kueue, "LocalQueue", queue, self.tenant.namespace)
            return str((lq.get("spec") or {}).get("clusterQueue") or "") or None
        return None

    def _unapproved(self, kind: str, approved: tuple[str, ...], api: str | None = None) -> str:
        """The highest live class of `kind` the tenant may not use (a made-up name if none)."""
        classes = sorted(
            self.admin.list(api or self.scratch.kueue, kind), key=lambda c: -int(c["value"])
        )
        return next(
            (c["metadata"]["name"] for c in classes if c["metadata"]["name"] not in approved),
            "kueue-gitops-unapproved",
        )

    def _try_patch_namespace(self, patch: Json) -> str | None:
        return _attempt(
            lambda: self.as_tenant.request(
                "PATCH",
                self.as_tenant.path("v1", "Namespace", None, self.tenant.namespace),
                query=DRY_RUN,
                body=patch,
                content_type="application/merge-patch+json",
                what=f"patch Namespace {self.tenant.namespace}",
            )
        )

    def _grant_namespace_patch(self) -> None:
        """A Role and RoleBinding in the tenant's namespace letting the probe user patch it."""
        meta = {
            "name": self.role,
            "namespace": self.tenant.namespace,
            "labels": {RUN_LABEL: self.scratch.run_id},
        }
        self.admin.create(
            {
                "apiVersion": RBAC_API,
                "kind": "Role",
                "metadata": meta,
                "rules": [
                    {
                        "apiGroups": [""],
                        "resources": ["namespaces"],
                        "resourceNames": [self.tenant.namespace],
                        "verbs": ["get", "patch"],
                    }
                ],
            }
        )
        self.admin.create(
            {
                "apiVersion": RBAC_API,
                "kind": "RoleBinding",
                "metadata": meta,
                "roleRef": {"apiGroup": RBAC_GROUP, "kind": "Role", "name": self.role},
                "subjects": [{"apiGroup": RBAC_GROUP, "kind": "User", "name": self.tenant.user}],
            }
        )

    def _make_queue(self, cluster_queue: str) -> None:
        self.admin.create(
            {
                "apiVersion": self.scratch.kueue,
                "kind": "LocalQueue",
                "metadata": {
                    "name": self.queue,
                    "namespace": self.tenant.namespace,
                    "labels": {RUN_LABEL: self.scratch.run_id},
                },
                "spec": {"clusterQueue": cluster_queue},
            }
        )
        self.queue_made = True

    def _delete_queue(self) -> None:
        if self.queue_made:
            self.admin.delete(self.scratch.kueue, "LocalQueue", self.queue, self.tenant.namespace)
            self.queue_made = False

    def _revoke_namespace_patch(self) -> None:
        for kind in ("RoleBinding", "Role"):
            with contextlib.suppress(ClusterAccessError):
                self.admin.delete(RBAC_API, kind, self.role, self.tenant.namespace)

    def _unbind(self) -> None:
        """Remove the queue-name binding, remembering it, until a Job without a queue passes."""
        try:
            live = self.admin.get(ADMISSION_API, admission.BINDING, admission.QUEUE_POLICY)
        except ClusterAccessError:
            return  # not there: nothing to remove (job-without-queue has failed already)
        meta = live.get("metadata") or {}
        self.unbound = {
            "apiVersion": ADMISSION_API,
            "kind": admission.BINDING,
            "metadata": {k: meta[k] for k in ("name", "labels", "annotations") if k in meta},
            "spec": live.get("spec") or {},
        }
        self.admin.delete(ADMISSION_API, admission.BINDING, admission.QUEUE_POLICY)
        self.scratch.wait_for(lambda: self._try_job({}, dry_run=True) is None, quiet=True)

    def _rebind(self) -> None:
        """Put the binding back as it was, and wait until the API server enforces it again."""
        if self.unbound is None:
            return
        self.admin.create(self.unbound)
        self.unbound = None
        self.scratch.wait_for(lambda: self._try_job({}, dry_run=True) is not None)

    def _dry_create(self, api: str, kind: str, extra: Json) -> t.Any:
        body = {
            "apiVersion": api,
            "kind": kind,
            "metadata": {"name": f"probe-{self.scratch.run_id}"},
            **extra,
        }
        return self.as_tenant.request(
            "POST", self.as_tenant.path(api, kind), query=DRY_RUN, body=body, what=f"create {kind}"
        )

    def _dry_patch(self, api: str, kind: str, name: str) -> t.Any:
        return self.as_tenant.request(
            "PATCH",
            self.as_tenant.path(api, kind, None, name),
            query=[*DRY_RUN, ("fieldManager", MANAGER)],
            body={"metadata": {"labels": {"kueue-gitops.io/probe": self.scratch.run_id}}},
            content_type="application/merge-patch+json",
            what=f"patch {kind} {name}",
        )


def _attempt(action: t.Callable[[], t.Any]) -> str | None:
    """None when the API server accepted `action`; else its refusal, in its words."""
    try:
        action()
    except ClusterAccessError as exc:
        return str(exc)
    return None


def _words(error: str) -> str:
    """What the API server said, without our prefix (`cluster X: create Job forbidden (403): `)."""
    return error.split("): ", 1)[-1]


def _by_policy(words: str | None, policy: str) -> bool:
    return (
        words is not None and "(403)" in words and f"ValidatingAdmissionPolicy '{policy}'" in words
    )


def _outcome(words: str | None) -> str:
    return "was ACCEPTED" if words is None else f"was refused: {_words(words)}"
