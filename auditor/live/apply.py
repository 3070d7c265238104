"""Apply the repository's manifests for one cluster the way Argo CD syncs them.

Server-side apply with Argo CD's field manager and --force-conflicts, in Argo CD's order:
sync wave first (our manifests use the kind order below), then namespaces, then other core
objects, then custom resources.
"""

from __future__ import annotations

import typing as t
from dataclasses import dataclass

from auditor.errors import ClusterAccessError
from auditor.model import Resource

if t.TYPE_CHECKING:
    from auditor.live.kube import KubeCluster

ARGOCD_MANAGER = "argocd-controller"
KIND_ORDER = (
    "Namespace",
    "ClusterRole",
    "ClusterRoleBinding",
    "Role",
    "RoleBinding",
    "PriorityClass",
    "WorkloadPriorityClass",
    "ResourceFlavor",
    "AdmissionCheck",
    "Cohort",
    "ClusterQueue",
    "LocalQueue",
)


def sync_order(resource: Resource) -> tuple[int, str, str, str]:
    kind = resource.kind
    rank = KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER)
    return (rank, kind, resource.namespace or "", resource.name)


@dataclass
class Applied:
    resource: Resource
    error: str | None = None


def apply_each(
    cluster: KubeCluster,
    resources: t.Iterable[Resource],
    *,
    manager: str = ARGOCD_MANAGER,
    dry_run: bool = False,
    field_validation: str | None = None,
) -> t.Iterator[tuple[Resource, ClusterAccessError | None]]:
    """Apply each object in sync order, yielding it with the server's refusal, if any; the
    caller decides whether a refusal stops the rest (stopping the iteration stops applying)."""
    for resource in sorted(resources, key=sync_order):
        try:
            cluster.apply(
                resource.body, manager=manager, dry_run=dry_run, field_validation=field_validation
            )
        except ClusterAccessError as exc:
            yield resource, exc
            continue
        yield resource, None


def apply_all(
    cluster: KubeCluster,
    resources: list[Resource],
    *,
    manager: str = ARGOCD_MANAGER,
    dry_run: bool = False,
) -> list[Applied]:
    """Apply each object in sync order; one object's rejection does not stop the others."""
    return [
        Applied(resource, str(exc) if exc else None)
        for resource, exc in apply_each(cluster, resources, manager=manager, dry_run=dry_run)
    ]
