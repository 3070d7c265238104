"""Which rule a difference breaks, from the object's kind and the field's path: one drift rule
per category.

Categories (docs/contracts.md, "Findings"): quota, cohort, label, rbac, flavor, preemption,
stop-policy, priority, admission-policy (the generated ValidatingAdmissionPolicies and their
bindings: one deleted or loosened live lets a tenant across a boundary), kueue-config (Kueue's
own Configuration, in its ConfigMap), version, other. Their rules, `drift-<category>`, are
declared in rules.yaml beside this module.
"""

from __future__ import annotations

from auditor import rules
from auditor.drift.normalize import Path
from auditor.k8s.objects import RBAC_KINDS
from auditor.kueue import admission, stop_policy
from auditor.kueue import config as kueue_config
from auditor.kueue.quota import QUOTA_FIELDS

RULES = rules.of(__name__)
QUOTA = RULES["drift-quota"]
COHORT = RULES["drift-cohort"]
LABEL = RULES["drift-label"]
RBAC = RULES["drift-rbac"]
FLAVOR = RULES["drift-flavor"]
PREEMPTION = RULES["drift-preemption"]
STOP_POLICY = RULES["drift-stop-policy"]
PRIORITY = RULES["drift-priority"]
ADMISSION_POLICY = RULES["drift-admission-policy"]
KUEUE_CONFIG = RULES["drift-kueue-config"]
VERSION = RULES["drift-version"]
OTHER = RULES["drift-other"]
CATEGORIES = (
    QUOTA,
    COHORT,
    LABEL,
    RBAC,
    FLAVOR,
    PREEMPTION,
    STOP_POLICY,
    PRIORITY,
    ADMISSION_POLICY,
    KUEUE_CONFIG,
    VERSION,
    OTHER,
)

PRIORITY_KINDS = frozenset({"PriorityClass", "WorkloadPriorityClass"})
PREEMPTION_FIELDS = frozenset({"preemption", "flavorFungibility"})
# A whole object missing or unmanaged: what it does to admission.
OBJECT_RULE = {
    "ClusterQueue": QUOTA,
    "LocalQueue": QUOTA,  # a queue is a door to some ClusterQueue's quota
    "ResourceFlavor": FLAVOR,
    "Cohort": COHORT,
    "Namespace": LABEL,  # a namespace matters to Kueue through its admission label
    "PriorityClass": PRIORITY,
    "WorkloadPriorityClass": PRIORITY,
    "ValidatingAdmissionPolicy": ADMISSION_POLICY,
    "ValidatingAdmissionPolicyBinding": ADMISSION_POLICY,
}


def rule(kind: str, path: Path = ()) -> rules.Rule:
    """The rule of a difference at `path` of an object of `kind` (whole object: path ())."""
    names = {p for p in path if isinstance(p, str)}
    if not path and kind in OBJECT_RULE:
        return OBJECT_RULE[kind]
    if kind in RBAC_KINDS:
        return RBAC
    if kind in admission.KINDS:
        return ADMISSION_POLICY
    if kind == "ConfigMap" and path[:2] == ("data", kueue_config.KEY):
        return KUEUE_CONFIG
    if path[:2] == ("metadata", "labels"):
        return LABEL
    if kind == "Cohort" or "cohortName" in names:
        return COHORT
    if names.intersection(QUOTA_FIELDS):
        return QUOTA
    if kind == "ResourceFlavor" or path[-1:] == ("flavors",) or _is_flavor_entry(path):
        return FLAVOR
    if names & PREEMPTION_FIELDS:
        return PREEMPTION
    if stop_policy.FIELD in names:
        return STOP_POLICY
    if kind in PRIORITY_KINDS:
        return PRIORITY
    return OTHER


def category(kind: str, path: Path = ()) -> str:
    """The category of a difference at `path` of an object of `kind`: its rule's."""
    return rule(kind, path).category


def of_object(api_version: str, kind: str, namespace: str | None, name: str) -> rules.Rule:
    """The rule of a whole object missing or unmanaged."""
    if kueue_config.is_config_map(api_version, kind, namespace, name):
        return KUEUE_CONFIG
    return rule(kind)


def _is_flavor_entry(path: Path) -> bool:
    """A whole flavor added to or taken out of a ClusterQueue's resource group."""
    return len(path) >= 2 and path[-2] == "flavors"
