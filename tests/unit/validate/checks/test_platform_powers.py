"""platform-powers: power over the platform's objects, judged for every subject."""

from __future__ import annotations

from pathlib import Path

from tests.unit.validate.checks.helpers import assert_findings, line_of, run_check, write

LEADS = "clusters/gpu-prod/leads.yaml"
CHECK = "platform-powers"


def binding(name: str, role: str, subject: str, namespace: str = "") -> str:
    kind = "RoleBinding" if namespace else "ClusterRoleBinding"
    meta = f"{{name: {name}, namespace: {namespace}}}" if namespace else f"{{name: {name}}}"
    return (
        f"apiVersion: rbac.authorization.k8s.io/v1\nkind: {kind}\nmetadata: {meta}\n"
        f"roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: {role}}}\n"
        f"subjects:\n  - {{apiGroup: rbac.authorization.k8s.io, {subject}}}\n"
    )


def role(name: str, rule: str) -> str:
    return (
        f"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {{name: {name}}}\n"
        f"rules:\n  - {rule}\n---\n"
    )


QUEUE_TUNER = role(
    "queue-tuner",
    "{apiGroups: [kueue.x-k8s.io], resources: [clusterqueues], verbs: [get, update, patch]}",
)
LABELLER = role("labeller", "{apiGroups: [''], resources: [namespaces], verbs: [patch]}")


def test_the_committed_bindings_give_the_platform_to_the_platform_only(repo_copy: Path) -> None:
    for cluster in ("gpu-prod", "gpu-staging", "gpu-legacy"):
        assert run_check(repo_copy, CHECK, cluster) == []


def test_a_group_that_may_update_every_clusterqueue_is_named_with_the_grant(
    repo_copy: Path,
) -> None:
    """The adopter's estate: group oidc:nlp-leads may update and patch every ClusterQueue."""
    leads = "kind: Group, name: oidc:nlp-leads"
    write(repo_copy, LEADS, QUEUE_TUNER + binding("nlp-leads-queues", "queue-tuner", leads))
    [finding] = run_check(repo_copy, CHECK)
    assert_findings(
        [finding],
        ("rbac-platform-power", "error", LEADS, line_of(repo_copy, LEADS, "oidc:nlp-leads")),
        contains="ClusterRoleBinding nlp-leads-queues lets Group oidc:nlp-leads, none of "
        "gpu-prod's platformIdentities (clusters/gpu-prod/profile.yaml), change the platform's "
        "objects: patch clusterqueues.kueue.x-k8s.io cluster-wide, update "
        "clusterqueues.kueue.x-k8s.io cluster-wide (through ClusterRoleBinding nlp-leads-queues "
        "-> ClusterRole queue-tuner -> rules[0])",
    )
    assert finding.path == "subjects[0]"
    assert finding.extra["subject"] == "Group oidc:nlp-leads"


def test_cluster_admin_for_a_robot_names_every_platform_power(repo_copy: Path) -> None:
    robot = "kind: ServiceAccount, name: deployer, namespace: ci"
    write(repo_copy, LEADS, binding("ci-root", "cluster-admin", robot))
    [finding] = run_check(repo_copy, CHECK)
    assert "ServiceAccount ci/deployer" in finding.message
    assert "delete resourceflavors.kueue.x-k8s.io cluster-wide" in finding.extra["powers"]
    assert "create priorityclasses.scheduling.k8s.io cluster-wide" in finding.extra["powers"]
    assert "patch namespaces cluster-wide" in finding.extra["powers"]
    assert "and 18 more" in finding.message  # 22 powers: four named, the rest counted


def test_the_platforms_identities_and_the_tenants_are_not_this_rules(repo_copy: Path) -> None:
    """A listed identity holds it on purpose; a tenant's group is rbac-tenant-power's."""
    platform = "kind: Group, name: example-org:platform"
    tenant = "kind: Group, name: example-org:team-a"
    write(
        repo_copy,
        LEADS,
        QUEUE_TUNER
        + binding("platform-queues", "queue-tuner", platform)
        + "---\n"
        + binding("team-a-queues", "queue-tuner", tenant),
    )
    assert run_check(repo_copy, CHECK) == []
    assert [f.rule.id for f in run_check(repo_copy, "tenant-powers")] == ["rbac-tenant-power"]


def test_relabelling_a_tenant_namespace_counts_and_another_namespace_does_not(
    repo_copy: Path,
) -> None:
    ops = "kind: Group, name: oidc:ops"
    write(
        repo_copy,
        LEADS,
        LABELLER
        + binding("ops-team-a", "labeller", ops, namespace="team-a")
        + "---\n"
        + binding("ops-scratch", "labeller", ops, namespace="ops-scratch"),
    )
    [finding] = run_check(repo_copy, CHECK)
    assert finding.name == "ops-team-a"
    assert finding.extra["powers"] == ["patch namespaces in namespace team-a"]


def test_reading_and_the_builtin_edit_give_no_platform_power(repo_copy: Path) -> None:
    leads = "kind: Group, name: oidc:nlp-leads"
    write(
        repo_copy,
        LEADS,
        binding("leads-view", "view", leads) + "---\n" + binding("leads-edit", "edit", leads),
    )
    assert run_check(repo_copy, CHECK) == []
