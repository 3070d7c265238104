"""Who can change quota: effective RBAC powers from roles, aggregated ClusterRoles and bindings.

A power is a verb on a resource, cluster-wide (namespace None) or inside one namespace. The
powers we watch are the ones that change what Kueue admits or who may grant more: writing
ClusterQueues, ResourceFlavors, Cohorts, PriorityClasses and WorkloadPriorityClasses; updating
or patching namespaces (their admission label); bind, escalate and impersonate.

The computation follows the RBAC authorizer: a ClusterRoleBinding grants its role's rules
everywhere, a RoleBinding only in its namespace (for a namespace object, the request's
namespace is the namespace itself, so a Role may grant `patch` on its own namespace). An
aggregated ClusterRole holds the union of the ClusterRoles its selectors match (what the
aggregation controller writes), so an aggregation not yet written still counts.
"""

from __future__ import annotations

import typing as t
from collections import defaultdict
from dataclasses import dataclass

Json = dict[str, t.Any]

WRITE = ("create", "update", "patch", "delete")
# (group, resource, verbs, may a RoleBinding grant it inside its namespace?)
WATCHED: tuple[tuple[str, str, tuple[str, ...], bool], ...] = (
    ("kueue.x-k8s.io", "clusterqueues", WRITE, False),
    ("kueue.x-k8s.io", "resourceflavors", WRITE, False),
    ("kueue.x-k8s.io", "cohorts", WRITE, False),
    ("kueue.x-k8s.io", "workloadpriorityclasses", WRITE, False),
    ("scheduling.k8s.io", "priorityclasses", WRITE, False),
    ("", "namespaces", ("update", "patch"), True),
    ("rbac.authorization.k8s.io", "roles", ("bind", "escalate"), True),
    ("rbac.authorization.k8s.io", "clusterroles", ("bind", "escalate"), True),
    ("", "users", ("impersonate",), False),
    ("", "groups", ("impersonate",), False),
    ("", "serviceaccounts", ("impersonate",), True),
)
MASTERS = "system:masters"  # the authorizer lets this group do anything, with no binding


@dataclass(frozen=True, order=True)
class Subject:
    kind: str  # User, Group or ServiceAccount
    name: str
    namespace: str | None = None

    def __str__(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {ns}{self.name}"


@dataclass(frozen=True, order=True)
class Power:
    verb: str
    group: str
    resource: str
    namespace: str | None = None  # None: cluster-wide

    def __str__(self) -> str:
        res = f"{self.resource}.{self.group}" if self.group else self.resource
        where = f"in namespace {self.namespace}" if self.namespace else "cluster-wide"
        return f"{self.verb} {res} {where}"


@dataclass(frozen=True)
class Grant:
    subject: Subject
    power: Power
    binding: Json  # the RoleBinding or ClusterRoleBinding it comes through
    role: str


def _matches(rule: Json, verb: str, group: str, resource: str) -> bool:
    def has(values: t.Any, wanted: str) -> bool:
        return bool(values) and ("*" in values or wanted in values)

    return (
        has(rule.get("verbs"), verb)
        and has(rule.get("apiGroups"), group)
        and has(rule.get("resources"), resource)
    )


def _selects(selector: Json, labels: dict[str, str]) -> bool:
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        ok = {
            "In": key in labels and labels[key] in values,
            "NotIn": key not in labels or labels[key] not in values,
            "Exists": key in labels,
            "DoesNotExist": key not in labels,
        }.get(op, False)
        if not ok:
            return False
    return True


def cluster_role_rules(cluster_roles: list[Json]) -> dict[str, list[Json]]:
    """Each ClusterRole's effective rules, aggregation included (to a fixed point)."""
    rules = {cr["metadata"]["name"]: list(cr.get("rules") or []) for cr in cluster_roles}
    aggregated = [cr for cr in cluster_roles if (cr.get("aggregationRule") or {})]
    changed = True
    while changed:
        changed = False
        for cr in aggregated:
            name = cr["metadata"]["name"]
            for selector in cr["aggregationRule"].get("clusterRoleSelectors") or []:
                for other in cluster_roles:
                    other_name = other["metadata"]["name"]
                    labels = other["metadata"].get("labels") or {}
                    if other_name == name or not _selects(selector, labels):
                        continue
                    for rule in rules[other_name]:
                        if rule not in rules[name]:
                            rules[name].append(rule)
                            changed = True
    return rules


def _subjects(binding: Json) -> list[Subject]:
    out = []
    for s in binding.get("subjects") or []:
        ns = s.get("namespace") if s.get("kind") == "ServiceAccount" else None
        out.append(Subject(s.get("kind", ""), s.get("name", ""), ns))
    return out


def grants(objects: t.Iterable[Json]) -> list[Grant]:
    """Every watched power each bound subject holds, with the binding it comes through."""
    by_kind: dict[str, list[Json]] = defaultdict(list)
    for obj in objects:
        by_kind[obj.get("kind", "")].append(obj)
    cluster_rules = cluster_role_rules(by_kind["ClusterRole"])
    role_rules = {
        (r["metadata"].get("namespace"), r["metadata"]["name"]): r.get("rules") or []
        for r in by_kind["Role"]
    }
    reach: dict[tuple[str, str | None, str], list[tuple[str, str, str, bool]]] = {}
    out: list[Grant] = []
    for binding in by_kind["ClusterRoleBinding"] + by_kind["RoleBinding"]:
        ref = binding.get("roleRef") or {}
        namespace = binding["metadata"].get("namespace")
        ident = (ref.get("kind", ""), namespace if ref.get("kind") == "Role" else None,
                 ref.get("name", ""))  # fmt: skip
        if ident not in reach:  # thousands of bindings share a handful of roles
            if ident[0] == "ClusterRole":
                rules = cluster_rules.get(ident[2], [])
            else:
                rules = role_rules.get((namespace, ident[2]), [])
            reach[ident] = [
                (verb, group, resource, namespaced)
                for group, resource, verbs, namespaced in WATCHED
                for verb in verbs
                if any(_matches(rule, verb, group, resource) for rule in rules)
            ]
        for verb, group, resource, namespaced in reach[ident]:
            if namespace and not namespaced:
                continue  # a RoleBinding cannot reach a cluster-scoped object
            power = Power(verb, group, resource, namespace)
            for subject in _subjects(binding):
                out.append(Grant(subject, power, binding, ident[2]))
    return out


def holds(found: list[Grant], subject: Subject, power: Power) -> bool:
    """Whether `subject` holds `power`: a cluster-wide grant covers every namespace."""
    if subject == Subject("Group", MASTERS):
        return True
    return any(
        g.subject == subject
        and (g.power == power or g.power == Power(power.verb, power.group, power.resource))
        for g in found
    )
