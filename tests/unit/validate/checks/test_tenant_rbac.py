from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.validate.checks.helpers import assert_findings, edit, line_of, run_check, write

BINDING = "tenants/team-a/gpu-prod/rbac.yaml"
PLATFORM = "clusters/gpu-prod/rbac.yaml"
ROLE = "tenants/team-a/gpu-prod/role.yaml"


def role(rules: str) -> str:
    return (
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\n"
        f"metadata: {{name: extra, namespace: team-a}}\nrules:\n{rules}"
    )


def test_binding_the_platform_submitter_role_passes(repo_copy: Path) -> None:
    assert run_check(repo_copy, "tenant-rbac") == []
    assert run_check(repo_copy, "tenant-rbac", "gpu-staging") == []


@pytest.mark.parametrize(
    ("rule", "expected", "says"),
    [
        (
            "  - {apiGroups: [kueue.x-k8s.io], resources: [clusterqueues], verbs: [patch]}\n",
            "rbac-platform-write",
            "patch on clusterqueues.kueue.x-k8s.io",
        ),
        (
            "  - {apiGroups: [kueue.x-k8s.io], resources: [resourceflavors, cohorts],"
            " verbs: [create]}\n",
            "rbac-platform-write",
            "create on resourceflavors.kueue.x-k8s.io, cohorts.kueue.x-k8s.io",
        ),
        (
            "  - {apiGroups: [scheduling.k8s.io], resources: [priorityclasses], verbs: [create]}\n",
            "rbac-platform-write",
            "create on priorityclasses.scheduling.k8s.io",
        ),
        (
            "  - {apiGroups: [kueue.x-k8s.io], resources: [workloadpriorityclasses],"
            " verbs: [delete]}\n",
            "rbac-platform-write",
            "delete on workloadpriorityclasses.kueue.x-k8s.io",
        ),
        (
            "  - {apiGroups: [''], resources: [namespaces], verbs: [get, update, patch]}\n",
            "rbac-namespace-write",
            "patch, update on namespaces; relabelling a namespace is admission",
        ),
        (
            "  - {apiGroups: [rbac.authorization.k8s.io], resources: [rolebindings],"
            " verbs: [create]}\n",
            "rbac-rbac-write",
            "tenants may not hand out access",
        ),
        (
            "  - {apiGroups: [rbac.authorization.k8s.io], resources: [roles],"
            " verbs: [bind, escalate]}\n",
            "rbac-escalation-verb",
            "the verb(s) bind, escalate",
        ),
        (
            "  - {apiGroups: [''], resources: [users], verbs: [impersonate]}\n",
            "rbac-escalation-verb",
            "the verb(s) impersonate",
        ),
        (
            "  - {apiGroups: [''], resources: [secrets, configmaps], verbs: [create]}\n",
            "rbac-write-not-submission",
            "create on secrets, configmaps; tenants may only submit jobs and read",
        ),
        (
            "  - {apiGroups: [batch], resources: [jobs/status], verbs: [patch]}\n",
            "rbac-write-not-submission",
            "patch on jobs/status.batch",
        ),
        (
            "  - {apiGroups: [kueue.x-k8s.io], resources: [clusterqueues],"
            " verbs: [deletecollection]}\n",
            "rbac-platform-write",
            "deletecollection on clusterqueues.kueue.x-k8s.io",
        ),
        (
            "  - {apiGroups: [certificates.k8s.io],"
            " resources: [certificatesigningrequests/approval], verbs: [approve]}\n",
            "rbac-write-not-submission",
            "approve on certificatesigningrequests/approval.certificates.k8s.io",
        ),
        (
            "  - {apiGroups: [batch], resources: ['*'], verbs: [get]}\n",
            "rbac-wildcard",
            "a wildcard in resources",
        ),
        (
            "  - {apiGroups: [batch], resources: [jobs], verbs: ['*']}\n",
            "rbac-wildcard",
            "a wildcard in verbs",
        ),
    ],
)
def test_a_tenant_role_granting_more_than_submission_is_an_error(
    repo_copy: Path, rule: str, expected: str, says: str
) -> None:
    write(repo_copy, ROLE, role(rule))
    assert_findings(
        run_check(repo_copy, "tenant-rbac"),
        (expected, "error", ROLE, 5),
        contains=says,
    )


def test_submitting_and_reading_jobs_of_every_integration_passes(repo_copy: Path) -> None:
    write(
        repo_copy,
        ROLE,
        role(
            "  - {apiGroups: [batch, jobset.x-k8s.io, kubeflow.org, ray.io],"
            " resources: [jobs, jobsets, pytorchjobs, rayjobs], verbs: [create, delete, patch]}\n"
            "  - {apiGroups: ['', kueue.x-k8s.io], resources: [pods, pods/log, workloads],"
            " verbs: [get, list, watch]}\n"
        ),
    )
    assert run_check(repo_copy, "tenant-rbac") == []


CONFIG = "clusters/gpu-prod/kueue/manager-config.yaml"


def test_creating_pods_is_an_error_where_kueue_does_not_manage_them(repo_copy: Path) -> None:
    """gpu-prod's Kueue integrates batch/job only: a bare Pod, like a Deployment, runs outside
    every quota there."""
    rules = "  - {apiGroups: [''], resources: [pods], verbs: [create]}\n"
    rules += "  - {apiGroups: [apps], resources: [deployments], verbs: [create]}\n"
    write(repo_copy, ROLE, role(rules))
    assert_findings(
        run_check(repo_copy, "tenant-rbac"),
        ("rbac-pod-create", "error", ROLE, 5),
        ("rbac-write-not-submission", "error", ROLE, 6),
    )
    [pods] = [f for f in run_check(repo_copy, "tenant-rbac") if f.rule.id == "rbac-pod-create"]
    assert "does not manage Pods (its Configuration's frameworks lack `pod`)" in pods.message


def test_creating_what_the_clusters_kueue_manages_is_submission(repo_copy: Path) -> None:
    """With Kueue's pod and deployment integrations on (read from the cluster's Kueue
    Configuration), creating Pods and Deployments is submitting work through Kueue."""
    rules = "  - {apiGroups: [''], resources: [pods], verbs: [create]}\n"
    rules += "  - {apiGroups: [apps], resources: [deployments], verbs: [create]}\n"
    write(repo_copy, ROLE, role(rules))
    edit(
        repo_copy,
        CONFIG,
        "        - batch/job\n",
        "        - batch/job\n        - pod\n        - deployment\n",
    )
    assert run_check(repo_copy, "tenant-rbac") == []


def test_a_binding_is_judged_by_the_platform_role_it_resolves_to(repo_copy: Path) -> None:
    reads = "workloads/status]\n    verbs: [get, list, watch]"
    edit(repo_copy, PLATFORM, reads, reads.replace("watch]", "watch, update]"))
    team_b = "tenants/team-b/gpu-prod/rbac.yaml"
    assert_findings(
        run_check(repo_copy, "tenant-rbac"),
        ("rbac-platform-write", "error", BINDING, line_of(repo_copy, BINDING, "name: kueue-")),
        ("rbac-platform-write", "error", team_b, line_of(repo_copy, team_b, "name: kueue-")),
        contains="binds ClusterRole kueue-gitops:tenant-submitter (clusters/gpu-prod/rbac.yaml:"
        f"{line_of(repo_copy, PLATFORM, 'resources: [localqueues')}), which grants update on "
        "localqueues.kueue.x-k8s.io, localqueues/status.kueue.x-k8s.io, workloads.kueue",
    )


@pytest.mark.parametrize("builtin", ["admin", "edit", "cluster-admin"])
def test_bindings_to_builtin_admin_roles_are_errors(repo_copy: Path, builtin: str) -> None:
    edit(repo_copy, BINDING, "name: kueue-gitops:tenant-submitter", f"name: {builtin}")
    assert_findings(
        run_check(repo_copy, "tenant-rbac"),
        ("rbac-builtin-role", "error", BINDING, line_of(repo_copy, BINDING, f"name: {builtin}")),
        contains=f"the built-in ClusterRole {builtin}",
    )


def test_a_binding_to_a_role_the_repo_does_not_define_is_an_error(repo_copy: Path) -> None:
    edit(repo_copy, BINDING, "name: kueue-gitops:tenant-submitter", "name: somebody-elses-role")
    assert_findings(
        run_check(repo_copy, "tenant-rbac"),
        ("rbac-unresolved-role", "error", BINDING, line_of(repo_copy, BINDING, "somebody-elses")),
        contains="is not defined for gpu-prod in this repository",
    )


def test_a_binding_to_the_tenants_own_role_is_judged_at_the_role(repo_copy: Path) -> None:
    write(repo_copy, ROLE, role("  - {apiGroups: [''], resources: [pods], verbs: [create]}\n"))
    edit(
        repo_copy,
        BINDING,
        "  kind: ClusterRole\n  name: kueue-gitops:tenant-submitter",
        "  kind: Role\n  name: extra",
    )
    assert [(f.rule.id, f.file) for f in run_check(repo_copy, "tenant-rbac")] == [
        ("rbac-pod-create", ROLE)
    ]


AGGREGATED = """apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: quota-admin}
aggregationRule:
  clusterRoleSelectors: [{matchLabels: {example.com/aggregate-to-quota-admin: "true"}}]
rules: []
"""
PART = """---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: quota-part
  labels: {example.com/aggregate-to-quota-admin: "true"}
rules:
  - {apiGroups: [batch], resources: [jobs], verbs: [get]}
  - {apiGroups: [kueue.x-k8s.io], resources: [clusterqueues], verbs: [deletecollection]}
"""


def test_a_binding_to_an_aggregated_role_is_judged_through_the_roles_it_aggregates(
    repo_copy: Path,
) -> None:
    write(repo_copy, "clusters/gpu-prod/quota-admin.yaml", AGGREGATED + PART)
    edit(repo_copy, BINDING, "name: kueue-gitops:tenant-submitter", "name: quota-admin")
    line = line_of(repo_copy, "clusters/gpu-prod/quota-admin.yaml", "deletecollection")
    assert_findings(
        run_check(repo_copy, "tenant-rbac"),
        ("rbac-platform-write", "error", BINDING, line_of(repo_copy, BINDING, "quota-admin")),
        contains="binds ClusterRole quota-admin -> ClusterRole quota-part rules[1] "
        f"(clusters/gpu-prod/quota-admin.yaml:{line}), which grants deletecollection on "
        "clusterqueues.kueue.x-k8s.io",
    )


def test_an_aggregated_role_the_repo_gives_no_parts_is_unresolved(repo_copy: Path) -> None:
    write(repo_copy, "clusters/gpu-prod/quota-admin.yaml", AGGREGATED)
    edit(repo_copy, BINDING, "name: kueue-gitops:tenant-submitter", "name: quota-admin")
    assert_findings(
        run_check(repo_copy, "tenant-rbac"),
        ("rbac-unresolved-role", "error", BINDING, line_of(repo_copy, BINDING, "quota-admin")),
        contains="aggregates no ClusterRole this repository defines",
    )
