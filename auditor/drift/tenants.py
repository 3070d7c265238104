"""Tenant powers the repository itself grants beyond the tenant baseline, as the cluster defines
the roles it binds.

rbac-power reports powers the repository does not give; a repository binding to a role it does
not define (a built-in one, or one installed by hand) is taken as that role is live, so what it
gives is trusted there. Here each repository binding is resolved with the live definitions of the
roles the repository leaves out, and a subject reaching a tenant (auditor.k8s.confinement) that
holds a power beyond the baseline is reported at the binding's file and line.

A power validate already sees the repository grant (a built-in role taken as
auditor.k8s.confinement defines it: validate's rbac-builtin-role and rbac-tenant-power) is not
reported again: it is no difference between the repository and the cluster, and one finding in
one place (validate's, which a baseline can accept) says it. Only what the live roles give beyond
that is drift's.
"""

from __future__ import annotations

import typing as t

from auditor import rules
from auditor.k8s import confinement, rbac
from auditor.k8s.objects import RBAC_KINDS, Json, ResourceKey
from auditor.model import Finding, Resource
from auditor.repo.profiles import ClusterProfile, TenantProfile

if t.TYPE_CHECKING:
    from auditor.drift import powers

_RULES = rules.of(__name__)
RBAC_TENANT_POWER_GRANTED = _RULES["rbac-tenant-power-granted"]

SHOWN = 4


def granted(
    profile: ClusterProfile,
    desired: list[Resource],
    views: powers.Views,
    tenants: t.Mapping[str, TenantProfile],
    key_of: t.Callable[[Json], ResourceKey],
) -> list[Finding]:
    """A finding per repository binding and subject that gives a tenant more than the baseline
    (`views`: the repository's RBAC with the roles it leaves out as live, and as validated)."""
    repo = {r.key: r for r in desired if r.kind in RBAC_KINDS}
    seen = {(g.subject, g.power) for g in views.as_validated.grants(confinement.WATCHED)}
    confined = [
        (tenant.name, tenant.group, tenant.clusters[profile.name].namespaces)
        for tenant in tenants.values()
        if profile.name in tenant.clusters
    ]
    found: dict[tuple[ResourceKey, rbac.Subject], list[tuple[str, rbac.Grant]]] = {}
    for grant in views.as_live.grants(confinement.WATCHED):
        if rbac.within(seen, grant.subject, grant.power):
            continue  # validate names it where the repository grants it
        for name, group, namespaces in confined:
            if confinement.reaches(grant.subject, group, namespaces) and confinement.beyond(
                grant.power, namespaces
            ):
                found.setdefault((key_of(grant.binding.body), grant.subject), []).append(
                    (name, grant)
                )
    return [_finding(profile, repo[k], s, grants) for (k, s), grants in sorted(found.items())]


def _finding(
    profile: ClusterProfile,
    binding: Resource,
    subject: rbac.Subject,
    grants: list[tuple[str, rbac.Grant]],
) -> Finding:
    tenants = ", ".join(sorted({name for name, _ in grants}))
    powers = sorted({str(g.power) for _, g in grants})
    listed = ", ".join(powers[:SHOWN]) + (
        f" and {len(powers) - SHOWN} more" if len(powers) > SHOWN else ""
    )
    paths = "; ".join(dict.fromkeys(g.path for _, g in grants))
    return Finding.about(
        binding,
        RBAC_TENANT_POWER_GRANTED,
        f"{subject} (tenant {tenants}) can {listed} through {paths}, with the roles as they "
        f"are on {profile.name}: more than the tenant baseline; remove the subject from "
        f"{binding.kind} {binding.name} or bind a narrower role",
        cluster=profile.name,
        extra={"subject": str(subject), "powers": powers},
    )
