"""No binding anywhere in the repository gives a tenant more than the tenant baseline.

tenant-rbac judges what tenant folders hold; a ClusterRoleBinding in `clusters/<cluster>/` can
give a tenant's group `patch` on namespaces just as well. Here every binding outside tenant
folders is resolved to effective powers per subject by the RBAC model (auditor.k8s.rbac, with the
built-in roles of auditor.k8s.confinement), and a subject that reaches a tenant (its group, its
namespaces' service accounts, everybody) holding a power beyond the baseline is an error at the
binding, naming the path of the grant. A binding of such a subject to a role the repository does
not define, and Kubernetes does not ship, cannot be bounded: an error too.

Its rules, each with an example that passes and one that fails, are declared beside it in
tenant_powers.rules.yaml (`kueue-gitops explain RULE`, docs/rules.md).
"""

from __future__ import annotations

import typing as t

from auditor import rules
from auditor.k8s import confinement, rbac
from auditor.k8s.objects import RBAC_GROUP, RBAC_KINDS
from auditor.model import Finding, Resource
from auditor.validate.checks import protocol

if t.TYPE_CHECKING:
    from auditor.validate.checks import CheckContext

RULES = rules.of(__name__)
RBAC_TENANT_POWER = RULES["rbac-tenant-power"]
RBAC_TENANT_ROLE_UNKNOWN = RULES["rbac-tenant-role-unknown"]

ID = "tenant-powers"
# Its findings about a binding depend on it, the roles and the profiles (protocol.Rerun).
RERUN = protocol.per_object_of("RoleBinding", "ClusterRoleBinding")
SHOWN = 4  # powers named in a message; the rest are counted


def check(ctx: CheckContext) -> t.Iterator[Finding]:
    objects = [r for r in ctx.of_kind(*RBAC_KINDS) if r.key.group == RBAC_GROUP]
    defined = {r.name for r in objects if r.kind == "ClusterRole"}
    policy = rbac.Policy([*(r.body for r in objects), *confinement.builtin_roles(defined)])
    written = {id(r.body): r for r in objects if not r.tenant}  # tenant folders: tenant-rbac's
    reached = _reached(ctx)
    beyond: dict[tuple[int, rbac.Subject], list[rbac.Grant]] = {}
    for grant in policy.grants(confinement.WATCHED):
        if id(grant.binding.body) in written and any(
            confinement.beyond(grant.power, ns) for ns in reached(grant.subject).values()
        ):
            beyond.setdefault((id(grant.binding.body), grant.subject), []).append(grant)
    for (ident, subject), grants in beyond.items():
        yield _power(written[ident], subject, sorted(reached(subject)), grants)
    for binding in policy.bindings:
        where = written.get(id(binding.body))
        if where is None or policy.rules(binding.role) is not None:
            continue
        for subject in binding.subjects:
            # with a folder of the cluster unrendered, the role may be one it would define
            if reached(subject) and not ctx.unrendered:
                yield _unknown(ctx, where, binding, subject, sorted(reached(subject)))


def _reached(ctx: CheckContext) -> t.Callable[[rbac.Subject], dict[str, tuple[str, ...]]]:
    """For a subject, the tenants on this cluster a binding to it reaches, with their namespaces."""
    tenants = [
        (tenant, tenant.clusters[ctx.cluster.name].namespaces)
        for tenant in ctx.tenants.values()
        if ctx.cluster.name in tenant.clusters
    ]

    def reached(subject: rbac.Subject) -> dict[str, tuple[str, ...]]:
        return {
            tenant.name: namespaces
            for tenant, namespaces in tenants
            if confinement.reaches(subject, tenant.group, namespaces)
        }

    return reached


def _subject_path(binding: Resource, subject: rbac.Subject) -> list[str | int]:
    """Where the grant was chosen: the subject's entry, or the role's name when an override
    (a patch, a Helm value) chose the role and none the subject."""
    raw = binding.body.get("subjects")
    path: list[str | int] = ["subjects"]
    for i, entry in enumerate(raw if isinstance(raw, list) else []):
        if rbac.subject_of(entry, binding.namespace) == subject:
            path = ["subjects", i]
            break
    role: list[str | int] = ["roleRef", "name"]
    if binding.where(path)[0] == binding.file and binding.where(role)[0] != binding.file:
        return role
    return path


def _power(
    binding: Resource, subject: rbac.Subject, tenants: list[str], grants: list[rbac.Grant]
) -> Finding:
    powers = sorted({str(g.power) for g in grants})
    listed = ", ".join(powers[:SHOWN]) + (
        f" and {len(powers) - SHOWN} more" if len(powers) > SHOWN else ""
    )
    paths = "; ".join(dict.fromkeys(g.path for g in grants))
    return Finding.about(
        binding,
        RBAC_TENANT_POWER,
        f"{binding.kind} {binding.name} gives {subject} (tenant {', '.join(tenants)}) more than "
        f"the tenant baseline: {listed} (through {paths}); tenants submit jobs and read in "
        "their own namespaces only: remove the subject or bind a narrower role",
        path=_subject_path(binding, subject),
        extra={"subject": str(subject), "powers": powers},
    )


def _unknown(
    ctx: CheckContext,
    where: Resource,
    binding: rbac.Binding,
    subject: rbac.Subject,
    tenants: list[str],
) -> Finding:
    return Finding.about(
        where,
        RBAC_TENANT_ROLE_UNKNOWN,
        f"{where.kind} {where.name} binds {subject} (tenant {', '.join(tenants)}) to "
        f"{binding.role}, which this repository does not define for {ctx.cluster.name} and "
        "Kubernetes does not ship, so what it grants the tenant cannot be bounded; define the "
        "role here or bind one that is",
        path=["roleRef", "name"],
    )
