"""drift: tenant powers the repository grants, judged by the roles as the cluster defines them."""

from __future__ import annotations

import typing as t

from auditor.drift import engine
from auditor.model import Resource
from auditor.repo.profiles import TenantCluster, TenantProfile
from tests.unit.drift.objects import PROFILE, RBAC, live_of, obj

TEAM_A = TenantProfile(
    name="team-a",
    file="tenants/team-a/profile.yaml",
    owners=("@example-org/team-a",),
    group="example-org:team-a",
    clusters={"c": TenantCluster(("team-a",), ("team-a-cq",))},
)
BINDING = obj(
    RBAC,
    "ClusterRoleBinding",
    "team-a-ops",
    roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "ops"},
    subjects=[{"kind": "Group", "name": "example-org:team-a"}],
)


def ops(rules: list[dict[str, t.Any]]) -> dict[str, t.Any]:
    return obj(RBAC, "ClusterRole", "ops", rules=rules)


def tenant_findings(live_role: dict[str, t.Any]) -> list[tuple[str, str | None, int | None, str]]:
    repo = [Resource(body=BINDING, file="clusters/c/rbac.yaml", line=7, cluster="c")]
    live = live_of(BINDING, live_role)
    found = engine.compare_cluster(engine.RepoSide(PROFILE, repo, tenants={"team-a": TEAM_A}), live)
    return [(f.rule.id, f.file, f.line, f.message) for f in found if "tenant" in f.rule.id]


def test_a_repo_binding_to_a_role_defined_only_live_is_judged_as_it_is_live() -> None:
    patch = [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["patch"]}]
    [(rule, file, line, message)] = tenant_findings(ops(patch))
    assert (rule, file, line) == ("rbac-tenant-power-granted", "clusters/c/rbac.yaml", 7)
    assert message.startswith(
        "Group example-org:team-a (tenant team-a) can patch namespaces cluster-wide through "
        "ClusterRoleBinding team-a-ops -> ClusterRole ops -> rules[0], with the roles as they "
        "are on c: more than the tenant baseline"
    )


def test_a_harmless_live_role_gives_no_finding() -> None:
    read = [{"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["get", "list"]}]
    assert tenant_findings(ops(read)) == []


def test_without_tenant_profiles_nothing_is_a_tenant() -> None:
    patch = [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["patch"]}]
    repo = [Resource(body=BINDING, file="clusters/c/rbac.yaml", line=7, cluster="c")]
    found = engine.compare_cluster(engine.RepoSide(PROFILE, repo), live_of(BINDING, ops(patch)))
    assert [f for f in found if f.rule.id == "rbac-tenant-power-granted"] == []


# The built-in `edit` as a cluster defines it (in part): Secrets, and impersonating the namespace's
# service accounts, which validate's model of it (auditor.k8s.confinement.BUILTIN) knows too.
EDIT_RULES = [
    {"apiGroups": [""], "resources": ["secrets", "pods"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["impersonate"]},
    {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["create", "delete", "patch"]},
]
EDITORS = obj(
    RBAC,
    "RoleBinding",
    "team-a-editors",
    meta={"namespace": "team-a"},
    roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
    subjects=[{"kind": "Group", "name": "example-org:team-a"}],
)


def edit_findings(live_edit_rules: list[dict[str, t.Any]]) -> list[str]:
    """drift's tenant findings right after an import of tenants bound to the built-in edit."""
    repo = [Resource(body=EDITORS, file="tenants/team-a/c/rbac.yaml", line=1, cluster="c")]
    live = live_of(EDITORS, obj(RBAC, "ClusterRole", "edit", rules=live_edit_rules))
    found = engine.compare_cluster(engine.RepoSide(PROFILE, repo, tenants={"team-a": TEAM_A}), live)
    return [f.message for f in found if f.rule.id == "rbac-tenant-power-granted"]


def test_a_power_the_repository_grants_through_a_builtin_role_is_not_drift() -> None:
    """The same grant is in the repository, and validate names it (rbac-builtin-role): drift
    right after an import has no difference to report."""
    assert edit_findings(EDIT_RULES) == []


def test_what_a_live_builtin_role_gives_beyond_validates_model_is_still_drift() -> None:
    """An aggregation installed by hand made `edit` patch namespaces (relabel its own, and so
    take admission): validate, judging `edit` as Kubernetes ships it, cannot see that."""
    relabel = {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["patch"]}
    [message] = edit_findings([*EDIT_RULES, relabel])
    assert "can patch namespaces in namespace team-a" in message
    assert "impersonate" not in message
