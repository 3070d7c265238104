"""Kueue's performance harness (auditor/sandbox/harness.py) as a repository estate.

One cluster: the platform files `init` writes (RBAC, alerts, Kueue's Configuration, from the
templates) and, from the harness, its ResourceFlavor, its cohorts (implicit in the harness: here
Cohort objects), its ClusterQueues, a WorkloadPriorityClass per Workload class (the harness gives
an integer priority; the class's name names it) and the capacity its quotas add up to. One
tenant per cohort owns that cohort's Namespaces and LocalQueues. What the project's checks ask
beyond the harness, and which changes no scheduling decision, is added and says so: the admission
label in each queue's namespaceSelector (the harness selects every namespace), the queues'
prune guards, the profile's allowance of reclaimWithinCohort: Any, and the tenants' preemption
evidence (the harness's Workloads are synthetic: nothing is lost when they are evicted).
"""

from __future__ import annotations

import datetime as dt
import typing as t

import yaml

from auditor.k8s.objects import KUEUE_GROUP
from auditor.k8s.quantity import parse
from auditor.kueue.quota import BORROWING, NOMINAL
from auditor.onboard.start import ClusterStart, render
from auditor.repo.profiles import PROFILE_FILE
from auditor.repo.root import CLUSTERS
from auditor.sandbox.harness import FLAVOR, RESOURCE, Harness, Queue, WorkloadClass

ADMISSION = ("kueue-gitops.io/admission", "enabled")  # init's defaults (ClusterStart)
TENANT_LABEL = "kueue-gitops.io/tenant"
OWNERS = ("@example-org/platform",)
GUARD = {"argocd.argoproj.io/sync-options": "Prune=false,Delete=false"}
TEMPLATES = ("rbac.yaml", "alerts.yaml", "kueue/manager-config.yaml")
UPSTREAM = "https://github.com/kubernetes-sigs/kueue/tree/{release}/test/performance/scheduler"


def estate(h: Harness, cluster: str, today: dt.date) -> dict[str, str]:
    """The estate's files by path from the repository root (the admission policies excepted:
    `generate policies` makes them from these). `today` dates the preemption evidence."""
    start = ClusterStart(cluster, OWNERS, h.release, admission=ADMISSION, tenant_label=TENANT_LABEL)
    values = start.values()
    api = f"{KUEUE_GROUP}/{values['kueue_api_version']}"
    origin = (
        f"# From Kueue {h.release}'s performance harness {h.name!r} (kueue-gitops trace import).\n"
    )
    base = f"{CLUSTERS}/{cluster}"
    cohorts = sorted({q.cohort for q in h.queues})
    order = sorted(h.classes.values(), key=lambda c: c.priority)
    files = {f"{base}/{name}": render(f"cluster/{name}", values) for name in TEMPLATES}
    files[f"{base}/{PROFILE_FILE}"] = origin + _dump([_profile(h, start, order)])
    files[f"{base}/resourceflavors.yaml"] = origin + _dump(
        [{"apiVersion": api, "kind": "ResourceFlavor", "metadata": {"name": FLAVOR}}]
    )
    files[f"{base}/priorityclasses.yaml"] = origin + _dump(
        [{"apiVersion": api, "kind": "WorkloadPriorityClass", "metadata": {"name": c.name},
          "value": c.priority} for c in order]
    )  # fmt: skip
    files[f"{base}/cohorts.yaml"] = origin + _dump(
        [{"apiVersion": api, "kind": "Cohort", "metadata": {"name": c}} for c in cohorts]
    )
    files[f"{base}/clusterqueues.yaml"] = origin + _dump(
        [_cluster_queue(q, api, today) for q in h.queues]
    )
    for cohort in cohorts:
        mine = [q for q in h.queues if q.cohort == cohort]
        files[f"tenants/{cohort}/{PROFILE_FILE}"] = origin + _dump(
            [_tenant(h, cohort, cluster, mine, order, today)]
        )
        docs = [doc for q in mine for doc in _namespace(q, cohort, api, today)]
        files[f"tenants/{cohort}/{cluster}/namespaces.yaml"] = origin + _dump(docs)
    return files


def _dump(docs: list[dict[str, t.Any]]) -> str:
    return "---\n".join(yaml.safe_dump(d, sort_keys=False) for d in docs)


def _profile(h: Harness, start: ClusterStart, order: list[WorkloadClass]) -> dict[str, t.Any]:
    capacity = sum(float(parse(q.nominal).value) for q in h.queues)  # no node holds more
    allow = {
        q.name: {"reclaimWithinCohort": "Any"} for q in h.queues if q.reclaim_within_cohort == "Any"
    }
    spec: dict[str, t.Any] = {
        "context": start.context or start.name,
        "owners": list(start.owners),
        "kueue": {"apiVersions": [start.values()["kueue_api_version"]], "version": h.release},
        "admissionLabel": {"key": ADMISSION[0], "value": ADMISSION[1]},
        "tenantLabel": TENANT_LABEL,
        # Argo CD's sync and the administrators: the policies in Deny lock neither out
        "platformIdentities": [
            "ServiceAccount argocd/argocd-application-controller",
            "Group system:masters",
        ],
        "capacity": {FLAVOR: {RESOURCE: f"{capacity:g}"}},
        "priority": {"workloadOrder": [c.name for c in order]},
    }
    if allow:
        spec["preemption"] = {"allow": allow}
    return {
        "apiVersion": "kueue-gitops.io/v1alpha1",
        "kind": "ClusterProfile",
        "metadata": {"name": start.name},
        "spec": spec,
    }


def _cluster_queue(q: Queue, api: str, today: dt.date) -> dict[str, t.Any]:
    resource: dict[str, t.Any] = {"name": RESOURCE, NOMINAL: q.nominal}
    if q.borrowing_limit is not None:
        resource[BORROWING] = q.borrowing_limit
    preemption = {
        k: v
        for k, v in (
            ("reclaimWithinCohort", q.reclaim_within_cohort),
            ("withinClusterQueue", q.within_cluster_queue),
        )
        if v
    }
    spec: dict[str, t.Any] = {
        "cohortName": q.cohort,
        "namespaceSelector": {"matchLabels": {ADMISSION[0]: ADMISSION[1], TENANT_LABEL: q.cohort}},
        "resourceGroups": [
            {"coveredResources": [RESOURCE],
             "flavors": [{"name": FLAVOR, "resources": [resource]}]}
        ],
    }  # fmt: skip
    if preemption:
        spec["preemption"] = preemption
    return {
        "apiVersion": api,
        "kind": "ClusterQueue",
        "metadata": {"name": q.name, "annotations": {**GUARD, **_cpu_only(today)}},
        "spec": spec,
    }


def _cpu_only(today: dt.date) -> dict[str, str]:
    """The harness's queues cover cpu alone, as its Workloads ask: accepted, for a year."""
    until = (today + dt.timedelta(days=365)).isoformat()
    return {
        "suppress.kueue-gitops.io/queue-admits-no-job": f"{until}: Kueue's performance harness "
        "queues cover cpu alone, the one resource its Workloads request"
    }


def _tenant(
    h: Harness,
    cohort: str,
    cluster: str,
    queues: list[Queue],
    order: list[WorkloadClass],
    today: dt.date,
) -> dict[str, t.Any]:
    names = [q.name for q in queues]
    spec: dict[str, t.Any] = {
        "owners": [f"@example-org/{cohort}"],
        "group": f"example-org:{cohort}",
        "clusters": {cluster: {"namespaces": names, "clusterQueues": names}},
        "priorityClasses": {"workload": [c.name for c in order]},
        "flavors": [FLAVOR],
    }
    if any(q.reclaim_within_cohort or q.within_cluster_queue for q in queues):
        evidence = {
            "reference": UPSTREAM.format(release=h.release),
            "date": today.isoformat(),
            "expires": (today + dt.timedelta(days=365)).isoformat(),
        }
        spec["preemption"] = {
            "checkpointing": {
                "validated": "the harness's Workloads hold no state: evicted, nothing is lost",
                **evidence,
            },
            "idempotentOutput": {
                "validated": "the harness's Workloads are synthetic: they write nothing",
                **evidence,
            },
        }
    return {
        "apiVersion": "kueue-gitops.io/v1alpha1",
        "kind": "TenantProfile",
        "metadata": {"name": cohort},
        "spec": spec,
    }


def _namespace(q: Queue, tenant: str, api: str, today: dt.date) -> list[dict[str, t.Any]]:
    return [
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {
                "name": q.name,
                "labels": {ADMISSION[0]: ADMISSION[1], TENANT_LABEL: tenant},
                "annotations": dict(GUARD),
            },
        },
        {
            "apiVersion": api,
            "kind": "LocalQueue",
            "metadata": {
                "name": q.name,
                "namespace": q.name,
                "annotations": {**GUARD, **_cpu_only(today)},
            },
            "spec": {"clusterQueue": q.name},
        },
    ]
