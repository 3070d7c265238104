"""Tenants get job submission and read access in their own namespaces, nothing more.

Each Role in a tenant folder is judged rule by rule; each RoleBinding is judged by what its role
grants, resolved from this cluster's objects in the repository by the RBAC model
(auditor.k8s.rbac: an aggregated ClusterRole by the ClusterRoles it aggregates; the platform's
`kueue-gitops:tenant-submitter` lives in `clusters/<cluster>/rbac.yaml`). A write is any verb but
get, list and watch (deletecollection, approve, use, ... included). Errors: writes to Kueue
objects (ClusterQueues, ResourceFlavors, Cohorts, WorkloadPriorityClasses, or LocalQueues outside
Git) and PriorityClasses; writes to namespaces (relabelling one is admission); writes to roles or
bindings; any other write that is not job submission (the job kinds Kueue integrates: batch
Jobs, JobSets, Kubeflow and Ray jobs, ...); `bind`, `escalate`, `impersonate`; wildcards;
bindings to `admin`, `edit`, `cluster-admin`, or to a role the repository does not define.
Creating Pods is an error where the cluster's Kueue does not manage Pods (its Configuration's
frameworks lack `pod`): they would run outside every quota. A kind the Configuration's
frameworks name (Deployments with `deployment`, ...) is job submission there.

Its rules, each with an example that passes and one that fails, are declared beside it in
tenant_rbac.rules.yaml (`kueue-gitops explain RULE`, docs/rules.md).
"""

from __future__ import annotations

import functools
import typing as t

from auditor import rules
from auditor.k8s import confinement, rbac
from auditor.k8s.objects import RBAC_GROUP, SCHEDULING_GROUP
from auditor.k8s.rbac import Policy, RoleRef
from auditor.kueue import config as kueue_config
from auditor.model import Finding, Resource
from auditor.repo import boundaries
from auditor.validate.checks import protocol
from auditor.validate.checks._common import KUEUE

if t.TYPE_CHECKING:
    from auditor.validate.checks import CheckContext

RULES = rules.of(__name__)
RBAC_WILDCARD = RULES["rbac-wildcard"]
RBAC_ESCALATION_VERB = RULES["rbac-escalation-verb"]
RBAC_PLATFORM_WRITE = RULES["rbac-platform-write"]
RBAC_NAMESPACE_WRITE = RULES["rbac-namespace-write"]
RBAC_RBAC_WRITE = RULES["rbac-rbac-write"]
RBAC_WRITE_NOT_SUBMISSION = RULES["rbac-write-not-submission"]
RBAC_BUILTIN_ROLE = RULES["rbac-builtin-role"]
RBAC_UNRESOLVED_ROLE = RULES["rbac-unresolved-role"]
RBAC_POD_CREATE = RULES["rbac-pod-create"]

ID = "tenant-rbac"
# a RoleBinding's findings: it, the roles it binds, the Configuration (protocol.Rerun)
RERUN = protocol.per_object_of("RoleBinding")

RBAC_RESOURCES = frozenset({"roles", "rolebindings", "clusterroles", "clusterrolebindings"})
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

Problem = tuple[rules.Rule, str, str]  # (our rule, what is wrong, the RBAC rule's field it is in)

JOB_GROUPS = frozenset(g for g, _ in JOB_RESOURCES)
JOB_NAMES = frozenset(r for _, r in JOB_RESOURCES)


Managed = frozenset[tuple[str, str]]  # (group, resource) of the kinds the cluster's Kueue queues


def managed_kinds(ctx: CheckContext) -> Managed:
    """The kinds Kueue manages on this cluster: the frameworks of its Configuration in the
    repository (Kueue's default, batch/job, without one), by the release's API."""
    config = boundaries.configuration(boundaries.config_map(ctx.of_kind("ConfigMap"))) or {}
    found, _unknown = kueue_config.frameworks(
        config, kueue_config.api_or_nearest(ctx.cluster.kueue_version)
    )
    return frozenset((f.group, f.resource) for f in found)


def problems(rule: rbac.Rule, managed: Managed = frozenset()) -> t.Iterator[Problem]:
    """What one rule of a Role or ClusterRole grants that a tenant may not have, on a cluster
    whose Kueue manages the `managed` kinds.

    Tenants read (rbac.READ_VERBS); every other verb the API server knows is a write, or one of
    rbac.ESCALATION_VERBS.
    """
    fields = {"apiGroups": rule.api_groups, "resources": rule.resources, "verbs": rule.verbs}
    wild = [k for k, v in fields.items() if any("*" in item for item in v)]
    if wild:
        yield RBAC_WILDCARD, f"a wildcard in {', '.join(wild)}", wild[0]
        return
    verbs = set(rule.verbs)
    escalation = verbs & set(rbac.ESCALATION_VERBS)
    if escalation:
        yield RBAC_ESCALATION_VERB, f"the verb(s) {', '.join(sorted(escalation))}", "verbs"
    writes = sorted(verbs - set(rbac.READ_VERBS) - escalation)
    hits: dict[rules.Rule, list[str]] = {}
    for group in rule.api_groups:
        for resource in rule.resources:
            for broken in _classify(group, resource, writes, managed):
                hits.setdefault(broken, []).append(f"{resource}.{group}".rstrip("."))
    for broken, resources in hits.items():
        granted = "create" if broken is RBAC_POD_CREATE else ", ".join(writes)
        yield broken, f"{granted} on {', '.join(resources)}", "resources"


@functools.lru_cache(maxsize=1024)
def _problems(rule: rbac.Rule, managed: Managed) -> tuple[Problem, ...]:
    """`problems`, once per rule (equal rules are equal wherever written): thousands of tenant
    RoleBindings bind the same few ClusterRoles."""
    return tuple(problems(rule, managed))


def _classify(group: str, resource: str, writes: list[str], managed: Managed) -> list[rules.Rule]:
    """The rules a write on (group, resource) breaks; reads break none."""
    base = resource.split("/")[0]
    # RBAC grants the cross product of groups and resources; combinations of job groups and job
    # resources that do not exist (jobs.ray.io) grant nothing, so they pass too.
    if not writes or (group in JOB_GROUPS and resource in JOB_NAMES):
        return []
    if (group, resource) in managed:  # Kueue queues it here (pods, deployments, ...)
        return []
    if group == KUEUE or (group == SCHEDULING_GROUP and base == "priorityclasses"):
        return [RBAC_PLATFORM_WRITE]
    if group == "" and base == "namespaces":
        return [RBAC_NAMESPACE_WRITE]
    if group == RBAC_GROUP and base in RBAC_RESOURCES:
        return [RBAC_RBAC_WRITE]
    if group == "" and resource == "pods":
        found = [RBAC_POD_CREATE] if "create" in writes else []
        return found + ([RBAC_WRITE_NOT_SUBMISSION] if set(writes) - {"create"} else [])
    return [RBAC_WRITE_NOT_SUBMISSION]


ADVICE = {
    RBAC_WILDCARD: "name the groups, resources and verbs",
    RBAC_ESCALATION_VERB: "these let a tenant grant itself more than it has",
    RBAC_PLATFORM_WRITE: "Kueue and priority objects change only through this repository",
    RBAC_NAMESPACE_WRITE: "relabelling a namespace is admission; the platform owns the labels",
    RBAC_RBAC_WRITE: "tenants may not hand out access",
    RBAC_WRITE_NOT_SUBMISSION: "tenants may only submit jobs and read; ask the platform team",
    RBAC_POD_CREATE: (
        "this cluster's Kueue does not manage Pods (its Configuration's frameworks lack `pod`), "
        "so they would run outside every quota; submit Jobs instead"
    ),
}


def _ref(kind: str, name: str, namespace: str | None) -> RoleRef:
    return RoleRef(kind, name, namespace if kind == "Role" else None)


def check(ctx: CheckContext) -> t.Iterator[Finding]:
    roles = {
        _ref(r.kind, r.name, r.namespace): r
        for r in ctx.of_kind("Role", "ClusterRole")
        if r.key.group == RBAC_GROUP
    }
    policy = Policy(r.body for r in roles.values())
    managed = managed_kinds(ctx)
    tenant_objects = [
        r for r in ctx.of_kind("Role", "RoleBinding") if r.tenant and r.key.group == RBAC_GROUP
    ]
    for role in (r for r in tenant_objects if r.kind == "Role"):
        for rule in policy.rules(_ref(role.kind, role.name, role.namespace)) or ():
            at = ("rules", rule.origin.index if rule.origin else 0)
            for broken, what, part in problems(rule, managed):
                yield Finding.about(
                    role,
                    broken,
                    f"Role {role.name} grants {what}; {ADVICE[broken]}",
                    path=(*at, part),
                )
    for binding in (r for r in tenant_objects if r.kind == "RoleBinding"):
        yield from _judge_binding(ctx, binding, roles, policy, managed)


def _judge_binding(
    ctx: CheckContext,
    binding: Resource,
    roles: dict[RoleRef, Resource],
    policy: Policy,
    managed: Managed,
) -> t.Iterator[Finding]:
    ref = binding.body.get("roleRef")
    ref = ref if isinstance(ref, dict) else {}
    kind, name = str(ref.get("kind", "")), str(ref.get("name", ""))
    at = ["roleRef", "name"]
    if kind == "ClusterRole" and name in confinement.BUILTIN:
        if not confinement.BUILTIN[name]:
            return  # view: read-only, no Secrets, nothing to object to
        yield Finding.about(
            binding,
            RBAC_BUILTIN_ROLE,
            f"RoleBinding {binding.name} grants the built-in ClusterRole {name}, which lets the "
            "tenant manage access and everything else in its namespace; bind a ClusterRole "
            f"clusters/{ctx.cluster.name}/rbac.yaml defines that lets it submit work and no more "
            "(kueue-gitops:tenant-submitter where `init` wrote the cluster)",
            path=at,
        )
        return
    role_ref = _ref(kind, name, binding.namespace)
    role = roles.get(role_ref)
    if role is not None and role.tenant:
        return  # a Role in a tenant folder is judged where it is written
    rules = policy.rules(role_ref)
    if role is None or rules is None or policy.aggregated.get(role_ref) == []:
        why = (
            f"is not defined for {ctx.cluster.name} in this repository"
            if role is None
            else "aggregates no ClusterRole this repository defines"
        )
        yield Finding.about(
            binding,
            RBAC_UNRESOLVED_ROLE,
            f"RoleBinding {binding.name} binds {kind or 'a role'} {name!r}, which {why}, so what "
            "it grants cannot be judged; bind a ClusterRole from "
            f"clusters/{ctx.cluster.name}/rbac.yaml",
            path=at,
        )
        return
    for rule in rules:
        origin = rule.origin
        written = roles.get(origin.role) if origin else None
        if origin is None or written is None:
            continue
        via = "" if origin.role == role_ref else f" -> {origin}"
        for broken, what, part in _problems(rule, managed):
            line = written.line_of(("rules", origin.index, part))
            yield Finding.about(
                binding,
                broken,
                f"RoleBinding {binding.name} binds {kind} {name}{via} ({written.file}:{line}), "
                f"which grants {what}; {ADVICE[broken]}",
                path=at,
            )
