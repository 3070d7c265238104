from __future__ import annotations

from pathlib import Path

from tests.unit.validate.checks.helpers import assert_findings, line_of, run_check

RBAC = "clusters/gpu-prod/rbac.yaml"
GROUP = "{apiGroup: rbac.authorization.k8s.io, kind: Group, name: example-org:team-a}"


def append(repo: Path, path: str, text: str) -> None:
    (repo / path).write_text((repo / path).read_text() + "---\n" + text)


def binding(name: str, role: str, subject: str = GROUP, namespace: str = "") -> str:
    kind = "RoleBinding" if namespace else "ClusterRoleBinding"
    meta = f"{{name: {name}, namespace: {namespace}}}" if namespace else f"{{name: {name}}}"
    return (
        f"apiVersion: rbac.authorization.k8s.io/v1\nkind: {kind}\nmetadata: {meta}\n"
        f"roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: {role}}}\n"
        f"subjects:\n  - {subject}\n"
    )


def cluster_role(name: str, rule: str) -> str:
    return (
        f"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {{name: {name}}}\n"
        f"rules:\n  - {rule}\n"
    )


def test_the_committed_bindings_keep_tenants_within_the_baseline(repo_copy: Path) -> None:
    assert run_check(repo_copy, "tenant-powers") == []
    assert run_check(repo_copy, "tenant-powers", "gpu-staging") == []


def test_namespace_patch_granted_from_the_platform_folder_is_an_error(repo_copy: Path) -> None:
    append(
        repo_copy,
        RBAC,
        cluster_role("ns-labeller", "{apiGroups: [''], resources: [namespaces], verbs: [patch]}")
        + "---\n"
        + binding("team-a-labels", "ns-labeller"),
    )
    assert_findings(
        run_check(repo_copy, "tenant-powers"),
        ("rbac-tenant-power", "error", RBAC, line_of(repo_copy, RBAC, "name: example-org:team-a")),
        contains="ClusterRoleBinding team-a-labels gives Group example-org:team-a (tenant team-a) "
        "more than the tenant baseline: patch namespaces cluster-wide (through ClusterRoleBinding "
        "team-a-labels -> ClusterRole ns-labeller -> rules[0])",
    )


def test_cluster_admin_anywhere_is_an_error_naming_what_it_gives(repo_copy: Path) -> None:
    append(repo_copy, RBAC, binding("team-a-root", "cluster-admin"))
    [finding] = run_check(repo_copy, "tenant-powers")
    assert finding.rule.id == "rbac-tenant-power" and finding.file == RBAC
    assert "create clusterqueues.kueue.x-k8s.io cluster-wide" in finding.extra["powers"]
    assert "get secrets cluster-wide" in finding.extra["powers"]
    assert "through ClusterRoleBinding team-a-root -> ClusterRole cluster-admin -> rules[0]" in (
        finding.message
    )


def test_service_accounts_and_everybody_groups_reach_the_tenant(repo_copy: Path) -> None:
    escalate = "{apiGroups: [rbac.authorization.k8s.io], resources: [clusterroles], verbs: [bind]}"
    append(
        repo_copy,
        RBAC,
        cluster_role("binder", escalate)
        + "---\n"
        + binding("ci-binder", "binder", "{kind: ServiceAccount, name: ci, namespace: team-b}")
        + "---\n"
        + binding("all-binder", "binder", "{kind: Group, name: system:authenticated}"),
    )
    found = run_check(repo_copy, "tenant-powers")
    assert sorted(f.message.split(" more than")[0] for f in found) == [
        "ClusterRoleBinding all-binder gives Group system:authenticated (tenant team-a, team-b)",
        "ClusterRoleBinding ci-binder gives ServiceAccount team-b/ci (tenant team-b)",
    ]


def test_secrets_only_in_the_tenants_own_namespaces(repo_copy: Path) -> None:
    secrets = "{apiGroups: [''], resources: [secrets], verbs: [get]}"
    append(
        repo_copy,
        RBAC,
        cluster_role("secret-reader", secrets)
        + "---\n"
        + binding("own-secrets", "secret-reader", namespace="team-a")
        + "---\n"
        + binding("their-secrets", "secret-reader", namespace="team-b"),
    )
    [finding] = run_check(repo_copy, "tenant-powers")
    assert finding.message.startswith(
        "RoleBinding their-secrets gives Group example-org:team-a (tenant team-a) more than "
        "the tenant baseline: get secrets in namespace team-b"
    )


def test_a_role_nobody_defines_cannot_be_bounded(repo_copy: Path) -> None:
    append(repo_copy, RBAC, binding("team-a-ops", "platform-operator"))
    assert_findings(
        run_check(repo_copy, "tenant-powers"),
        ("rbac-tenant-role-unknown", "error", RBAC, line_of(repo_copy, RBAC, "platform-operator")),
        contains="binds Group example-org:team-a (tenant team-a) to ClusterRole platform-operator",
    )


def test_tenant_folder_bindings_are_left_to_tenant_rbac(repo_copy: Path) -> None:
    folder = "tenants/team-a/gpu-prod/rbac.yaml"
    append(repo_copy, folder, binding("team-a-edit", "edit", namespace="team-a"))
    assert run_check(repo_copy, "tenant-powers") == []
    assert [f.rule.id for f in run_check(repo_copy, "tenant-rbac")] == ["rbac-builtin-role"]
