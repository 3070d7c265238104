"""drift: tenant powers the repository grants, judged by the roles as the cluster defines them."""

from __future__ import annotations

import typing as t

from auditor.drift import engine, reading
from auditor.model import Resource
from auditor.repo.profiles import TenantCluster, TenantProfile
from tests.unit.drift.test_engine import PROFILE, RBAC, live_of, obj

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
    found = engine.compare_cluster(
        PROFILE, repo, live, reading.LiveSchemas(None, []), {"team-a": TEAM_A}
    )
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
    found = engine.compare_cluster(
        PROFILE, repo, live_of(BINDING, ops(patch)), reading.LiveSchemas(None, [])
    )
    assert [f for f in found if f.rule.id == "rbac-tenant-power-granted"] == []
