"""What the boundary probes (crossing) act with: a tenant's identity, and the objects a probe
must make and undo as the verifying identity (a Job, a LocalQueue, a Role and its binding).

The tenant is reached through the verifying identity's own credentials and the
Impersonate-User / Impersonate-Group headers; that identity needs `impersonate`. Everything an
Actor makes is recorded, so `undo` removes exactly that.
"""

from __future__ import annotations

import contextlib
import time
import typing as t
from dataclasses import dataclass

from auditor.errors import ClusterAccessError
from auditor.k8s.objects import RBAC_API, RBAC_GROUP, Json
from auditor.live.apierrors import ApiError, Forbidden, NotFound
from auditor.verify.model import (
    MANAGER,
    PROBE_IMAGE,
    RUN_LABEL,
    Probe,
)
from auditor.verify.scratch import Scratch

DRY_RUN = [("dryRun", "All")]
MISSING_QUEUE = "kueue-gitops-no-such-queue"


@dataclass(frozen=True)
class ActingTenant:
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


class Actor:
    """Acts as `tenant` (and, to set up and undo, as the verifying identity); remembers what
    it made so that `undo` removes exactly that."""

    def __init__(self, scratch: Scratch, tenant: ActingTenant) -> None:
        self.scratch = scratch
        self.admin = scratch.cluster
        self.tenant = tenant
        self.as_tenant = scratch.cluster.impersonating(tenant.user, [tenant.group])
        self.jobs: list[str] = []
        self.role = f"kueue-gitops-probe-{scratch.run_id}"
        self.queue = f"kueue-gitops-probe-{scratch.run_id}"  # the undeclared LocalQueue
        self.queue_made = False
        self.made = 0

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

    def try_job(
        self,
        labels: dict[str, str],
        *,
        dry_run: bool,
        pod_class: str | None = None,
        probe: Probe | None = None,
        name: str | None = None,
    ) -> ClusterAccessError | None:
        """None when the tenant's Job was accepted; else the API server's refusal."""
        body = self._job(name or f"probe-{self.scratch.run_id}", labels, pod_class, probe)
        path = self.as_tenant.path("batch/v1", "Job", self.tenant.namespace)
        words = attempt(
            lambda: self.as_tenant.request(
                "POST", path, query=DRY_RUN if dry_run else None, body=body, what="create Job"
            )
        )
        if words is None and not dry_run:
            self.jobs.append(body["metadata"]["name"])
            self.made += 1
        return words

    def delete_job(self, name: str) -> None:
        self.admin.delete("batch/v1", "Job", name, self.tenant.namespace, propagation="Background")
        if name in self.jobs:
            self.jobs.remove(name)

    def left_jobs(self) -> list[str]:
        return [
            j["metadata"]["name"]
            for j in self.admin.list_in("batch/v1", "Job", self.tenant.namespace)
            if (j["metadata"].get("labels") or {}).get(RUN_LABEL) == self.scratch.run_id
        ]

    def queue_target(self, queue: str) -> str | None:
        with contextlib.suppress(NotFound):
            lq = self.admin.get(self.scratch.kueue, "LocalQueue", queue, self.tenant.namespace)
            return str((lq.get("spec") or {}).get("clusterQueue") or "") or None
        return None

    def unapproved(self, kind: str, approved: tuple[str, ...], api: str | None = None) -> str:
        """The highest live class of `kind` the tenant may not use (a made-up name if none)."""
        classes = sorted(
            self.admin.list(api or self.scratch.kueue, kind), key=lambda c: -int(c["value"])
        )
        return next(
            (c["metadata"]["name"] for c in classes if c["metadata"]["name"] not in approved),
            "kueue-gitops-unapproved",
        )

    def try_patch_namespace(self, patch: Json) -> ClusterAccessError | None:
        return attempt(
            lambda: self.as_tenant.request(
                "PATCH",
                self.as_tenant.path("v1", "Namespace", None, self.tenant.namespace),
                query=DRY_RUN,
                body=patch,
                content_type="application/merge-patch+json",
                what=f"patch Namespace {self.tenant.namespace}",
            )
        )

    def grant_namespace_patch(self) -> None:
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

    def make_queue(self, cluster_queue: str) -> None:
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

    def delete_queue(self) -> None:
        if self.queue_made:
            self.admin.delete(self.scratch.kueue, "LocalQueue", self.queue, self.tenant.namespace)
            self.queue_made = False

    def revoke_namespace_patch(self) -> None:
        for kind in ("RoleBinding", "Role"):
            with contextlib.suppress(NotFound):
                self.admin.delete(RBAC_API, kind, self.role, self.tenant.namespace)

    def dry_create(self, api: str, kind: str, extra: Json) -> t.Any:
        body = {
            "apiVersion": api,
            "kind": kind,
            "metadata": {"name": f"probe-{self.scratch.run_id}"},
            **extra,
        }
        return self.as_tenant.request(
            "POST", self.as_tenant.path(api, kind), query=DRY_RUN, body=body, what=f"create {kind}"
        )

    def dry_patch(self, api: str, kind: str, name: str) -> t.Any:
        return self.as_tenant.request(
            "PATCH",
            self.as_tenant.path(api, kind, None, name),
            query=[*DRY_RUN, ("fieldManager", MANAGER)],
            body={"metadata": {"labels": {"kueue-gitops.io/probe": self.scratch.run_id}}},
            content_type="application/merge-patch+json",
            what=f"patch {kind} {name}",
        )

    def undo(self) -> list[str]:
        """Remove what was made; what could not be, in words."""
        problems: list[str] = []
        with contextlib.suppress(ClusterAccessError):
            self.revoke_namespace_patch()
        with contextlib.suppress(ClusterAccessError):
            self.delete_queue()
        for name in list(self.jobs):
            with contextlib.suppress(ClusterAccessError):
                self.delete_job(name)
        deadline = time.monotonic() + self.scratch.timeout
        left = self.left_jobs()
        while left and time.monotonic() < deadline:
            time.sleep(0.5)
            left = self.left_jobs()
        if left:
            problems.append(f"Jobs of this run still in {self.tenant.namespace}: {left}")
        made = [
            (RBAC_API, "RoleBinding", self.role),
            (RBAC_API, "Role", self.role),
            (self.scratch.kueue, "LocalQueue", self.queue),
        ]
        for api, kind, name in made:
            try:
                self.admin.get(api, kind, name, self.tenant.namespace)
            except NotFound:
                continue
            except ClusterAccessError as exc:  # not known to be gone: said, never assumed
                problems.append(f"{kind} {self.tenant.namespace}/{name} not checked: {exc}")
                continue
            problems.append(f"{kind} {self.tenant.namespace}/{name} still there")
        return problems


def attempt(action: t.Callable[[], t.Any]) -> ClusterAccessError | None:
    """None when the API server accepted `action`; else its refusal."""
    try:
        action()
    except ClusterAccessError as exc:
        return exc
    return None


def words_of(error: ClusterAccessError) -> str:
    """What the API server said, without our prefix (`cluster X: create Job forbidden (403): `)."""
    return error.said if isinstance(error, ApiError) else str(error)


def by_policy(refusal: ClusterAccessError | None, policy: str) -> bool:
    """Whether the ValidatingAdmissionPolicy `policy` forbade it (its own reason: Forbidden)."""
    return isinstance(refusal, Forbidden) and f"ValidatingAdmissionPolicy '{policy}'" in str(
        refusal
    )


def outcome(refusal: ClusterAccessError | None) -> str:
    return "was ACCEPTED" if refusal is None else f"was refused: {words_of(refusal)}"
