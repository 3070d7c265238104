"""What a subject confined to its own namespaces (a tenant's people and workloads) may not hold.

Every power auditor.k8s.rbac watches is beyond it: writes to cluster-scoped Kueue objects and
PriorityClasses, updating or patching namespaces (relabelling one is admission), bind, escalate
and impersonate. Reading Secrets is watched here too, and allowed only in the subject's own
namespaces. A binding reaches a confined subject through its group, its namespaces' service
accounts, or the groups everybody (or every service account) is in.

Kubernetes' built-in ClusterRoles are seldom defined in a repository; for judging bindings to
them, BUILTIN gives each the part of its default rules this module watches (cluster-admin
everything; admin and edit Secrets and impersonating service accounts; view nothing). What the
API server's bootstrap policy writes itself (`bootstrap`) is nobody's drift.
"""

from __future__ import annotations

import typing as t

from auditor.k8s import rbac
from auditor.k8s.objects import Json

SECRETS = rbac.Watched("", "secrets", rbac.READ_VERBS, True)
WATCHED = (*rbac.WATCHED, SECRETS)
EVERYBODY = ("system:authenticated", "system:serviceaccounts")
BOOTSTRAP_LABEL = "kubernetes.io/bootstrapping"  # =rbac-defaults on the bootstrap policy's RBAC

_NAMESPACE_EDITOR = [
    {"apiGroups": [""], "resources": ["secrets"], "verbs": list(rbac.READ_VERBS)},
    {"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["impersonate"]},
]
BUILTIN: dict[str, list[Json]] = {
    "cluster-admin": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}],
    "admin": _NAMESPACE_EDITOR,
    "edit": _NAMESPACE_EDITOR,
    "view": [],
}


def builtin_roles(defined: t.Container[str]) -> list[Json]:
    """The built-in ClusterRoles a set of objects does not define itself, as objects."""
    return [
        {"kind": "ClusterRole", "metadata": {"name": name}, "rules": rules}
        for name, rules in BUILTIN.items()
        if name not in defined
    ]


def bootstrap(obj: Json) -> bool:
    """Whether an RBAC object is the API server's own: its bootstrap policy (labelled
    kubernetes.io/bootstrapping=rbac-defaults) or the control plane's, in a kube-* namespace."""
    meta = obj.get("metadata") or {}
    labels = meta.get("labels") or {}
    return labels.get(BOOTSTRAP_LABEL) == "rbac-defaults" or str(
        meta.get("namespace") or ""
    ).startswith("kube-")


def reaches(subject: rbac.Subject, group: str | None, namespaces: t.Collection[str]) -> bool:
    """Whether a binding to `subject` gives its powers to the members of `group` or to the
    service accounts of `namespaces`."""
    if subject.kind == "ServiceAccount":
        return subject.namespace in namespaces
    if subject.kind != "Group":
        return False
    accounts = {f"system:serviceaccounts:{ns}" for ns in namespaces}
    return subject.name == group or subject.name in accounts or subject.name in EVERYBODY


def beyond(power: rbac.Power, namespaces: t.Collection[str]) -> bool:
    """Whether a watched power is more than a subject confined to `namespaces` may hold."""
    if power.resource == SECRETS.resource and power.group == SECRETS.group:
        return power.namespace not in namespaces
    return True
