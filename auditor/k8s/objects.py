"""Kubernetes object identity: keys, API groups and versions, which kinds are cluster-scoped."""

from __future__ import annotations

import typing as t
from dataclasses import dataclass

Json = dict[str, t.Any]  # a Kubernetes object or any part of one, as decoded from YAML or JSON
FieldPath = tuple[str | int, ...]  # a field inside one: keys and list indexes, outermost first

CRD_API = "apiextensions.k8s.io/v1"
ADMISSION_API = "admissionregistration.k8s.io/v1"
RBAC_GROUP = "rbac.authorization.k8s.io"
RBAC_API = f"{RBAC_GROUP}/v1"
SCHEDULING_GROUP = "scheduling.k8s.io"  # PriorityClass
SCHEDULING_API = f"{SCHEDULING_GROUP}/v1"
RBAC_KINDS = ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
KUEUE_GROUP = "kueue.x-k8s.io"  # here, not in auditor.kueue, so RBAC rules below it can name it

CLUSTER_SCOPED_KINDS = frozenset(
    {
        "Namespace",
        "ClusterRole",
        "ClusterRoleBinding",
        "PriorityClass",
        "ResourceFlavor",
        "ClusterQueue",
        "Cohort",
        "WorkloadPriorityClass",
        "AdmissionCheck",
        "Topology",
        "MultiKueueCluster",
        "MultiKueueConfig",
        "ProvisioningRequestConfig",
        "CustomResourceDefinition",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
    }
)


@dataclass(frozen=True, order=True)
class ResourceKey:
    """Identity of an object: group, kind, namespace and name (the version is not identity)."""

    group: str
    kind: str
    namespace: str | None
    name: str

    def __str__(self) -> str:
        kind = f"{self.kind}.{self.group}" if self.group else self.kind
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{kind} {where}{self.name}"


def group_of(api_version: str) -> str:
    return api_version.rpartition("/")[0] if "/" in api_version else ""
