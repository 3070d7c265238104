"""Nobody outside the platform's identities may change the platform's objects.

tenant-powers judges what the repository's bindings give the tenants; a ClusterRoleBinding that
lets any other subject (a team leads' group, a CI robot) update every ClusterQueue, write a
priority class or relabel a tenant's namespace changes what every tenant is admitted as surely,
and without a pull request. Every binding outside the tenant folders (tenant-rbac judges those) is
resolved to effective powers per subject by the RBAC model (auditor.k8s.rbac, the built-in roles
of auditor.k8s.confinement), and a subject that is none of the cluster profile's
`platformIdentities` and no tenant's, holding such a power (auditor.k8s.platform), is an error at
the binding's subject, naming the path of each grant. An imported estate's are findings to fix
or to baseline.

Its rules, each with an example that passes and one that fails, are declared beside it in
platform_powers.rules.yaml (`kueue-gitops explain RULE`, docs/rules.md).
"""

from __future__ import annotations

import typing as t

from auditor import rules
from auditor.k8s import confinement, platform, rbac
from auditor.k8s.objects import RBAC_GROUP, RBAC_KINDS
from auditor.model import Finding, Resource
from auditor.validate.checks import protocol

if t.TYPE_CHECKING:
    from auditor.validate.checks import CheckContext

RULES = rules.of(__name__)
RBAC_PLATFORM_POWER = RULES["rbac-platform-power"]

ID = "platform-powers"
# Its findings about a binding depend on it, the roles and the profiles (protocol.Rerun).
RERUN = protocol.per_object_of("RoleBinding", "ClusterRoleBinding")


def check(ctx: CheckContext) -> t.Iterator[Finding]:
    objects = [r for r in ctx.of_kind(*RBAC_KINDS) if r.key.group == RBAC_GROUP]
    defined = {r.name for r in objects if r.kind == "ClusterRole"}
    policy = rbac.Policy([*(r.body for r in objects), *confinement.builtin_roles(defined)])
    written = {id(r.body): r for r in objects if not r.tenant}  # tenant folders: tenant-rbac's
    found: dict[tuple[int, rbac.Subject], list[rbac.Grant]] = {}
    for grant in platform.grants(policy, ctx.cluster.platform_identities, tenants_of(ctx)):
        if id(grant.binding.body) in written:
            found.setdefault((id(grant.binding.body), grant.subject), []).append(grant)
    for (ident, subject), grants in found.items():
        yield _finding(ctx, written[ident], subject, grants)


def tenants_of(ctx: CheckContext) -> list[platform.Tenant]:
    """The tenants on this cluster: their group and namespaces."""
    return [
        platform.Tenant(tenant.group, tenant.clusters[ctx.cluster.name].namespaces)
        for tenant in ctx.tenants.values()
        if ctx.cluster.name in tenant.clusters
    ]


def _finding(
    ctx: CheckContext, binding: Resource, subject: rbac.Subject, grants: list[rbac.Grant]
) -> Finding:
    powers, said = platform.describe(grants)
    return Finding.about(
        binding,
        RBAC_PLATFORM_POWER,
        f"{binding.kind} {binding.name} lets {subject}, none of {ctx.cluster.name}'s "
        f"platformIdentities ({ctx.cluster.file}), change the platform's objects: {said}; "
        "remove the subject or bind a narrower role, or, if it is the platform's, list it in "
        "platformIdentities",
        path=_subject_path(binding, subject),
        extra={"subject": str(subject), "powers": powers},
    )


def _subject_path(binding: Resource, subject: rbac.Subject) -> list[str | int]:
    raw = binding.body.get("subjects")
    for i, entry in enumerate(raw if isinstance(raw, list) else []):
        if rbac.subject_of(entry, binding.namespace) == subject:
            return ["subjects", i]
    return ["subjects"]
