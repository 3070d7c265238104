"""Which category a difference belongs to, from the object's kind and the field's path.

Categories (ARCHITECTURE.md): quota, cohort, label, rbac, flavor, preemption, stop-policy,
priority, admission-policy (the generated ValidatingAdmissionPolicies and their bindings: one
deleted or loosened live lets a tenant across a boundary), kueue-config (Kueue's own
Configuration, in its ConfigMap), version, other.
"""

from __future__ import annotations

from auditor.drift.normalize import Path
from auditor.k8s.objects import RBAC_KINDS
from auditor.kueue import admission
from auditor.kueue import config as kueue_config
from auditor.kueue.quota import QUOTA_FIELDS

PRIORITY_KINDS = frozenset({"PriorityClass", "WorkloadPriorityClass"})
PREEMPTION_FIELDS = frozenset({"preemption", "flavorFungibility"})
# A whole object missing or unmanaged: what it does to admission.
OBJECT_CATEGORY = {
    "ClusterQueue": "quota",
    "LocalQueue": "quota",  # a queue is a door to some ClusterQueue's quota
    "ResourceFlavor": "flavor",
    "Cohort": "cohort",
    "Namespace": "label",  # a namespace matters to Kueue through its admission label
    "PriorityClass": "priority",
    "WorkloadPriorityClass": "priority",
    "ValidatingAdmissionPolicy": "admission-policy",
    "ValidatingAdmissionPolicyBinding": "admission-policy",
}


def category(kind: str, path: Path = ()) -> str:
    """The category of a difference at `path` of an object of `kind` (whole object: path ())."""
    names = {p for p in path if isinstance(p, str)}
    if not path and kind in OBJECT_CATEGORY:
        return OBJECT_CATEGORY[kind]
    if kind in RBAC_KINDS:
        return "rbac"
    if kind in admission.KINDS:
        return "admission-policy"
    if kind == "ConfigMap" and path[:2] == ("data", kueue_config.KEY):
        return "kueue-config"
    if path[:2] == ("metadata", "labels"):
        return "label"
    if kind == "Cohort" or "cohortName" in names:
        return "cohort"
    if names.intersection(QUOTA_FIELDS):
        return "quota"
    if kind == "ResourceFlavor" or path[-1:] == ("flavors",) or _is_flavor_entry(path):
        return "flavor"
    if names & PREEMPTION_FIELDS:
        return "preemption"
    if "stopPolicy" in names:
        return "stop-policy"
    if kind in PRIORITY_KINDS:
        return "priority"
    return "other"


def of_object(api_version: str, kind: str, namespace: str | None, name: str) -> str:
    """The category of a whole object missing or unmanaged."""
    if kueue_config.is_config_map(api_version, kind, namespace, name):
        return "kueue-config"
    return category(kind)


def _is_flavor_entry(path: Path) -> bool:
    """A whole flavor added to or taken out of a ClusterQueue's resource group."""
    return len(path) >= 2 and path[-2] == "flavors"
