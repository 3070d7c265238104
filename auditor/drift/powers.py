"""RBAC drift judged by the powers it gives (auditor.k8s.rbac): a subject holding a watched
power live that neither the repository, the API server's bootstrap policy (k8s/confinement), nor
the cluster profile's `drift.trustedSubjects` explains is an `rbac-power` finding at the binding
that grants it, with the grant path (binding -> role -> rule).

What the repository grants is judged where it is written: validate's platform-powers names every
subject outside the profile's `platformIdentities` with power over the platform's objects
(auditor.k8s.platform). A repository binding to a role the repository does not define, though,
validate judges only as Kubernetes ships that role (or not at all); here it is resolved as the
cluster defines it, and what that gives such a subject beyond validate's view is an
`rbac-platform-power-granted` finding at the binding's file and line."""

from __future__ import annotations

import typing as t
from dataclasses import dataclass

from auditor import rules
from auditor.drift.reading import key_of
from auditor.k8s import confinement, platform, rbac
from auditor.k8s.objects import RBAC_KINDS, Json, ResourceKey
from auditor.model import Finding, Resource
from auditor.repo.profiles import ClusterProfile, TenantProfile

RULES = rules.of(__name__)
RBAC_POWER = RULES["rbac-power"]
RBAC_PLATFORM_POWER_GRANTED = RULES["rbac-platform-power-granted"]


Held = set[tuple[rbac.Subject, rbac.Power]]  # who holds which watched power


def explained(
    desired: list[Resource], rbac_live: list[Json], *, repo_bindings: bool = True
) -> Held:
    """The watched powers the repository gives, the roles its bindings use but it does not
    define taken as they are live, with the API server's own (bootstrap) bindings among
    `rbac_live`. A binding's grants are its own (bindings define no role): over any split of
    the bindings, each part with every role, the sets make the whole one. Without
    `repo_bindings`, the repository's roles only (a part of live bindings, read later)."""
    repo_rbac = {r.key: r.body for r in desired if r.kind in RBAC_KINDS}
    wanted = [o for o in repo_rbac.values() if repo_bindings or _is_role(o)]
    wanted += [o for o in rbac_live if key_of(o) not in repo_rbac and _role_or_baseline(o)]
    return {(g.subject, g.power) for g in rbac.grants(wanted)}


def unexplained_powers(
    profile: ClusterProfile,
    desired: list[Resource],
    rbac_live: list[Json],
    allowed: Held | None = None,
) -> list[Finding]:
    """Subjects holding a watched power live (`rbac_live`: the cluster's RBAC objects) that the
    repo (and bootstrap policy) does not give (`allowed`: explained(desired, rbac_live))."""
    repo_rbac = {r.key: r.body for r in desired if r.kind in RBAC_KINDS}
    allowed = explained(desired, rbac_live) if allowed is None else allowed
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
    return obj.get("kind") in ("Role", "ClusterRole") or confinement.bootstrap(obj)


@dataclass(frozen=True)
class Views:
    """The repository's RBAC objects resolved two ways, built once for the tenants' check
    (drift/tenants.py) and the platform's: with the roles it leaves out as the cluster defines
    them (`as_live`), and as validate sees them, built-in roles as Kubernetes ships them
    (`as_validated`). Thousands of bindings: each Policy resolves them all."""

    as_live: rbac.Policy
    as_validated: rbac.Policy

    @classmethod
    def of(cls, desired: list[Resource], rbac_live: list[Json]) -> Views:
        repo = {r.key: r for r in desired if r.kind in RBAC_KINDS}
        defined = {r.name for r in repo.values() if r.kind == "ClusterRole"}
        live_roles = [o for o in rbac_live if _is_role(o) and key_of(o) not in repo]
        live_names = {key_of(o).name for o in live_roles if o.get("kind") == "ClusterRole"}
        written = [r.body for r in repo.values()]
        return cls(
            rbac.Policy([*written, *live_roles, *confinement.builtin_roles(defined | live_names)]),
            rbac.Policy([*written, *confinement.builtin_roles(defined)]),
        )


def platform_granted(
    profile: ClusterProfile,
    desired: list[Resource],
    views: Views,
    tenants: t.Mapping[str, TenantProfile],
) -> list[Finding]:
    """A finding per repository binding and subject outside the platform's identities that the
    roles as they are live give power over the platform's objects validate cannot see."""
    repo = {r.key: r for r in desired if r.kind in RBAC_KINDS}
    confined = [
        platform.Tenant(tp.group, tp.clusters[profile.name].namespaces)
        for tp in tenants.values()
        if profile.name in tp.clusters
    ]
    identities = profile.platform_identities
    validated = platform.grants(views.as_validated, identities, confined)
    seen = {(g.subject, g.power) for g in validated}
    found: dict[tuple[ResourceKey, rbac.Subject], list[rbac.Grant]] = {}
    for grant in platform.grants(views.as_live, identities, confined):
        if not rbac.within(seen, grant.subject, grant.power):
            found.setdefault((key_of(grant.binding.body), grant.subject), []).append(grant)
    return [
        _platform_finding(profile, repo[key], subject, grants)
        for (key, subject), grants in sorted(found.items())
    ]


def _is_role(obj: Json) -> bool:
    return obj.get("kind") in ("Role", "ClusterRole")


def _platform_finding(
    profile: ClusterProfile, binding: Resource, subject: rbac.Subject, grants: list[rbac.Grant]
) -> Finding:
    powers, said = platform.describe(grants)
    return Finding.about(
        binding,
        RBAC_PLATFORM_POWER_GRANTED,
        f"{subject}, none of {profile.name}'s platformIdentities, can change the platform's "
        f"objects with the roles as they are on {profile.name}: {said}; remove the subject from "
        f"{binding.kind} {binding.name}, bind a narrower role, or define the role in the "
        "repository so validate judges it",
        cluster=profile.name,
        extra={"subject": str(subject), "powers": powers},
    )
