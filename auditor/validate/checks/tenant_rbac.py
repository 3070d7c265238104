"""Tenants get job submission and read access in their own namespaces, nothing more.

Each Role in a tenant folder is judged rule by rule; each RoleBinding is judged by what its role
grants, resolved from this cluster's objects in the repository (the platform's ClusterRole
`kueue-gitops:tenant-submitter` lives in `clusters/<cluster>/rbac.yaml`). Errors: writes to Kueue
objects (ClusterQueues, ResourceFlavors, Cohorts, WorkloadPriorityClasses, or LocalQueues outside
Git) and PriorityClasses; writes to namespaces (relabelling one is admission); writes to roles or
bindings; any other write that is not job submission (the job kinds Kueue integrates: batch
Jobs, JobSets, Kubeflow and Ray jobs, ...); `bind`, `escalate`, `impersonate`; wildcards;
bindings to `admin`, `edit`, `cluster-admin`, or to a role the repository does not define.
Creating Pods warns: bare Pods bypass Kueue's admission.

Passes (tenants/team-a/gpu-prod/rbac.yaml)::

    apiVersion: rbac.authorization.k8s.io/v1
    kind: RoleBinding
    metadata: {name: team-a-submitters, namespace: team-a}
    roleRef:
      apiGroup: rbac.authorization.k8s.io
      kind: ClusterRole
      name: kueue-gitops:tenant-submitter
    subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: example-org:team-a}]

Fails (tenants/team-a/gpu-prod/rbac.yaml)::

    apiVersion: rbac.authorization.k8s.io/v1
    kind: RoleBinding
    metadata: {name: team-a-admins, namespace: team-a}
    roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: admin}
    subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: example-org:team-a}]
"""

from __future__ import annotations

import typing as t

from auditor.model import Finding, Resource
from auditor.validate.checks._common import KUEUE

if t.TYPE_CHECKING:
    from auditor.validate.checks import CheckContext

ID = "tenant-rbac"
CATEGORY = "rbac"
LEVELS = {
    "rbac-wildcard": "error",
    "rbac-escalation-verb": "error",
    "rbac-platform-write": "error",
    "rbac-namespace-write": "error",
    "rbac-rbac-write": "error",
    "rbac-write-not-submission": "error",
    "rbac-builtin-role": "error",
    "rbac-unresolved-role": "error",
    "rbac-pod-create": "warning",
}

RBAC = "rbac.authorization.k8s.io"
WRITE_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})
ESCALATION_VERBS = frozenset({"bind", "escalate", "impersonate"})
RBAC_RESOURCES = frozenset({"roles", "rolebindings", "clusterroles", "clusterrolebindings"})
BUILTIN_ADMIN = frozenset({"admin", "edit", "cluster-admin"})
BUILTIN_READ = frozenset({"view"})  # read-only, no Secrets: nothing to object to
# Job submission: the job kinds Kueue's integrations queue (their /status is the controller's).
JOB_RESOURCES = frozenset(
    {
        ("batch", "jobs"),
        ("jobset.x-k8s.io", "jobsets"),
        ("trainer.kubeflow.org", "trainjobs"),
        ("ray.io", "rayjobs"),
        ("ray.io", "rayclusters"),
        ("ray.io", "rayservices"),
        ("leaderworkerset.x-k8s.io", "leaderworkersets"),
        ("sparkoperator.k8s.io", "sparkapplications"),
        *(
            ("kubeflow.org", kind)
            for kind in ("mpijobs", "pytorchjobs", "tfjobs", "xgboostjobs", "paddlejobs", "jaxjobs")
        ),
    }
)

Problem = tuple[str, str, tuple[str | int, ...]]  # (rule, what is wrong, path inside the role)

JOB_GROUPS = frozenset(g for g, _ in JOB_RESOURCES)
JOB_NAMES = frozenset(r for _, r in JOB_RESOURCES)


def _strings(rule: dict[str, t.Any], key: str) -> list[str]:
    values = rule.get(key)
    return [str(v) for v in values] if isinstance(values, list) else []


def problems(role: Resource) -> t.Iterator[Problem]:
    """What each rule of a Role or ClusterRole grants that a tenant may not have."""
    rules = role.body.get("rules")
    for i, rule in enumerate(rules if isinstance(rules, list) else []):
        if not isinstance(rule, dict):
            continue
        at: tuple[str | int, ...] = ("rules", i)
        fields = {k: _strings(rule, k) for k in ("apiGroups", "resources", "verbs")}
        wild = [k for k, v in fields.items() if any("*" in item for item in v)]
        if wild:
            yield "rbac-wildcard", f"a wildcard in {', '.join(wild)}", (*at, wild[0])
            continue
        verbs = set(fields["verbs"])
        if verbs & ESCALATION_VERBS:
            found = ", ".join(sorted(verbs & ESCALATION_VERBS))
            yield "rbac-escalation-verb", f"the verb(s) {found}", (*at, "verbs")
        writes = sorted(verbs & WRITE_VERBS)
        hits: dict[str, list[str]] = {}
        for group in fields["apiGroups"]:
            for resource in fields["resources"]:
                for rule_id in _classify(group, resource, writes):
                    hits.setdefault(rule_id, []).append(f"{resource}.{group}".rstrip("."))
        for rule_id, resources in hits.items():
            granted = "create" if rule_id == "rbac-pod-create" else ", ".join(writes)
            yield rule_id, f"{granted} on {', '.join(resources)}", (*at, "resources")


def _classify(group: str, resource: str, writes: list[str]) -> list[str]:
    """The rules a write on (group, resource) breaks; reads break none."""
    base = resource.split("/")[0]
    # RBAC grants the cross product of groups and resources; combinations of job groups and job
    # resources that do not exist (jobs.ray.io) grant nothing, so they pass too.
    if not writes or (group in JOB_GROUPS and resource in JOB_NAMES):
        return []
    if group == KUEUE or (group == "scheduling.k8s.io" and base == "priorityclasses"):
        return ["rbac-platform-write"]
    if group == "" and base == "namespaces":
        return ["rbac-namespace-write"]
    if group == RBAC and base in RBAC_RESOURCES:
        return ["rbac-rbac-write"]
    if group == "" and resource == "pods":
        found = ["rbac-pod-create"] if "create" in writes else []
        return found + (["rbac-write-not-submission"] if set(writes) - {"create"} else [])
    return ["rbac-write-not-submission"]


ADVICE = {
    "rbac-wildcard": "name the groups, resources and verbs",
    "rbac-escalation-verb": "these let a tenant grant itself more than it has",
    "rbac-platform-write": "Kueue and priority objects change only through this repository",
    "rbac-namespace-write": "relabelling a namespace is admission; the platform owns the labels",
    "rbac-rbac-write": "tenants may not hand out access",
    "rbac-write-not-submission": "tenants may only submit jobs and read; ask the platform team",
    "rbac-pod-create": "bare Pods bypass Kueue's admission; submit Jobs instead",
}


def check(ctx: CheckContext) -> t.Iterator[Finding]:
    tenant_objects = [r for r in ctx.resources if r.tenant and r.key.group == RBAC]
    for role in (r for r in tenant_objects if r.kind == "Role"):
        for rule, what, path in problems(role):
            yield Finding.about(
                role, rule, f"Role {role.name} grants {what}; {ADVICE[rule]}", CATEGORY, path=path
            )
    roles = {
        (r.kind, r.namespace, r.name): r
        for r in ctx.of_kind("Role", "ClusterRole")
        if r.key.group == RBAC
    }
    for binding in (r for r in tenant_objects if r.kind == "RoleBinding"):
        yield from _judge_binding(ctx, binding, roles)


def _judge_binding(
    ctx: CheckContext, binding: Resource, roles: dict[tuple[str, str | None, str], Resource]
) -> t.Iterator[Finding]:
    ref = binding.body.get("roleRef")
    ref = ref if isinstance(ref, dict) else {}
    kind, name = str(ref.get("kind", "")), str(ref.get("name", ""))
    at = ["roleRef", "name"]
    if kind == "ClusterRole" and name in BUILTIN_ADMIN:
        yield Finding.about(
            binding,
            "rbac-builtin-role",
            f"RoleBinding {binding.name} grants the built-in ClusterRole {name}, which lets the "
            "tenant manage access and everything else in its namespace; bind "
            "kueue-gitops:tenant-submitter instead",
            CATEGORY,
            path=at,
        )
        return
    if kind == "ClusterRole" and name in BUILTIN_READ:
        return
    role = roles.get((kind, binding.namespace if kind == "Role" else None, name))
    if role is not None and role.tenant:
        return  # a Role in a tenant folder is judged where it is written
    if role is None or "aggregationRule" in role.body:
        why = (
            "is aggregated from other roles"
            if role is not None
            else f"is not defined for {ctx.cluster.name} in this repository"
        )
        yield Finding.about(
            binding,
            "rbac-unresolved-role",
            f"RoleBinding {binding.name} binds {kind or 'a role'} {name!r}, which {why}, so what "
            "it grants cannot be judged; bind a ClusterRole from "
            f"clusters/{ctx.cluster.name}/rbac.yaml",
            CATEGORY,
            path=at,
        )
        return
    for rule, what, path in problems(role):
        yield Finding.about(
            binding,
            rule,
            f"RoleBinding {binding.name} binds {kind} {name} ({role.file}:"
            f"{role.line_of(path)}), which grants {what}; {ADVICE[rule]}",
            CATEGORY,
            path=at,
        )
