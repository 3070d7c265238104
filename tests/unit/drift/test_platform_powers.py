"""drift: power over the platform's objects that repository bindings give, as the cluster defines
the roles they bind (validate's platform-powers judges what the repository defines)."""

from __future__ import annotations

import dataclasses
import typing as t

from auditor.drift import engine, reading
from auditor.model import Resource
from auditor.repo.profiles import TenantCluster, TenantProfile
from tests.unit.drift import objects

RBAC = "rbac.authorization.k8s.io/v1"
PROFILE = dataclasses.replace(
    objects.PROFILE, trusted_subjects=(), platform_identities=("Group example-org:platform",)
)
TEAM_A = TenantProfile(
    name="team-a",
    file="tenants/team-a/profile.yaml",
    owners=("@example-org/team-a",),
    group="example-org:team-a",
    clusters={"c": TenantCluster(("team-a",), ("team-a-cq",))},
)
PATCH_QUEUES = {"apiGroups": ["kueue.x-k8s.io"], "resources": ["clusterqueues"], "verbs": ["patch"]}


def obj(kind: str, name: str, **extra: t.Any) -> dict[str, t.Any]:
    return {"apiVersion": RBAC, "kind": kind, "metadata": {"name": name}, **extra}


def bound(group: str, role: str = "queue-tuner") -> dict[str, t.Any]:
    return obj(
        "ClusterRoleBinding",
        f"{group.rsplit(':', 1)[-1]}-queues",
        roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        subjects=[{"kind": "Group", "name": group}],
    )


def platform_findings(
    repo: list[dict[str, t.Any]], live: list[dict[str, t.Any]]
) -> list[tuple[str, str | None, str]]:
    """drift's rbac-platform-power-granted findings: (binding, file, message)."""
    state = reading.Live()
    state.read = {k for _, k in reading.kinds_to_read(PROFILE, [])}
    for o in live:
        state.objects[reading.key_of(o)] = o
    desired = [Resource(body=b, file="clusters/c/leads.yaml", line=1, cluster="c") for b in repo]
    side = engine.RepoSide(PROFILE, desired, tenants={"team-a": TEAM_A})
    found = engine.compare_cluster(side, state)
    return [
        (f.name or "", f.file, f.message)
        for f in found
        if f.rule.id == "rbac-platform-power-granted"
    ]


def test_a_repo_binding_to_a_live_only_role_that_patches_every_clusterqueue() -> None:
    """After import the binding is in the repository and its role only on the cluster: rbac-power
    trusts it, validate cannot read the role; drift names the power and its path."""
    leads = bound("oidc:nlp-leads")
    live_role = obj("ClusterRole", "queue-tuner", rules=[PATCH_QUEUES])
    [(name, file, message)] = platform_findings([leads], [leads, live_role])
    assert (name, file) == ("nlp-leads-queues", "clusters/c/leads.yaml")
    assert message.startswith(
        "Group oidc:nlp-leads, none of c's platformIdentities, can change the platform's objects "
        "with the roles as they are on c: patch clusterqueues.kueue.x-k8s.io cluster-wide "
        "(through ClusterRoleBinding nlp-leads-queues -> ClusterRole queue-tuner -> rules[0])"
    )


def test_the_platform_the_tenants_and_a_role_the_repo_defines_are_not_drifts() -> None:
    """A platform identity holds it on purpose; a tenant's group is rbac-tenant-power-granted's;
    a role the repository defines, validate judges (rbac-platform-power): none is drift's."""
    role = obj("ClusterRole", "queue-tuner", rules=[PATCH_QUEUES])
    platform, tenant = bound("example-org:platform"), bound("example-org:team-a")
    assert platform_findings([platform, tenant], [platform, tenant, role]) == []
    leads = bound("oidc:nlp-leads")
    assert platform_findings([leads, role], [leads, role]) == []


def test_a_harmless_live_role_gives_no_finding() -> None:
    leads = bound("oidc:nlp-leads", role="view")
    view = obj(
        "ClusterRole",
        "view",
        rules=[{"apiGroups": ["kueue.x-k8s.io"], "resources": ["*"], "verbs": ["get", "list"]}],
    )
    assert platform_findings([leads], [leads, view]) == []
