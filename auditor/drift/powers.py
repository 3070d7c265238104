"""RBAC drift judged by the powers it gives (auditor.k8s.rbac): a subject holding a watched
power live that neither the repository, the API server's bootstrap policy (k8s/baseline), nor
the cluster profile's `drift.trustedSubjects` explains is an `rbac-power` finding at the binding
that grants it, with the grant path (binding -> role -> rule)."""

from __future__ import annotations

from auditor import rules
from auditor.drift.reading import key_of
from auditor.k8s import baseline, rbac
from auditor.k8s.objects import RBAC_KINDS, Json, ResourceKey
from auditor.model import Finding, Resource
from auditor.repo.profiles import ClusterProfile

RULES = rules.of(__name__)
RBAC_POWER = RULES["rbac-power"]


def unexplained_powers(
    profile: ClusterProfile, desired: list[Resource], rbac_live: list[Json]
) -> list[Finding]:
    """Subjects holding a watched power live (`rbac_live`: the cluster's RBAC objects) that the
    repo (and bootstrap policy) does not give."""
    repo_rbac = {r.key: r.body for r in desired if r.kind in RBAC_KINDS}
    # Roles the repo's bindings use but the repo does not define are taken as they are live.
    wanted = [*repo_rbac.values()]
    wanted += [o for o in rbac_live if key_of(o) not in repo_rbac and _role_or_baseline(o)]
    allowed = {(g.subject, g.power) for g in rbac.grants(wanted)}
    extra: dict[tuple[ResourceKey, rbac.Subject], list[rbac.Grant]] = {}
    trusted = set(profile.trusted_subjects)
    for grant in rbac.grants(rbac_live):
        if (
            not rbac.within(allowed, grant.subject, grant.power)
            and str(grant.subject) not in trusted
        ):
            extra.setdefault((key_of(grant.binding.body), grant.subject), []).append(grant)
    findings = []
    for (key, subject), found in sorted(extra.items()):
        held = sorted({str(g.power) for g in found})
        listed = ", ".join(held)
        binding = found[0].binding.body
        written = ", ".join(dict.fromkeys(g.written for g in found))
        findings.append(
            Finding(
                RBAC_POWER,
                f"{subject} can {listed} through {key} -> {found[0].role} -> {written}; "
                "the repo grants it no such power",
                cluster=profile.name,
                api_version=binding.get("apiVersion"),
                kind=key.kind,
                namespace=key.namespace,
                name=key.name,
                change="unmanaged" if key not in repo_rbac else "modified",
                desired=None,
                live=listed,
                extra={"subject": str(subject), "powers": held},
            )
        )
    return findings


def _role_or_baseline(obj: Json) -> bool:
    return obj.get("kind") in ("Role", "ClusterRole") or baseline.bootstrap(obj)
