"""Check admission-lockout: policies in Deny exempt Argo CD's sync and an administrator, and a
tenant's approved levels cover what its own objects in the repository use."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.validate.checks.helpers import assert_findings, edit, line_of, run_check, write

PROFILE = "clusters/gpu-prod/profile.yaml"
IDENTITIES = (
    ("  platformIdentities:              # alone may set namespaces' admission and tenant labels\n")
    + """    - ServiceAccount argocd/argocd-application-controller   # Argo CD's sync
    - Group example-org:platform
    - Group system:masters         # break-glass cluster admins (the sandbox's admin too)
"""
)
JOBS = "tenants/team-a/gpu-prod/jobs.yaml"


def identities(repo: Path, *kept: str) -> None:
    listed = "".join(f"    - {i}\n" for i in kept)
    edit(repo, PROFILE, IDENTITIES, f"  platformIdentities:\n{listed}" if kept else "")


def test_the_estate_locks_nobody_out(repo_copy: Path) -> None:
    assert run_check(repo_copy, "admission-lockout") == []


def test_deny_without_any_platform_identity_locks_out_the_sync_and_the_admins(
    repo_copy: Path,
) -> None:
    identities(repo_copy)  # what an import wrote before it proposed them
    findings = run_check(repo_copy, "admission-lockout")
    assert [f.rule.id for f in findings] == ["admission-policies-lock-out"] * 2
    assert findings[0].file == PROFILE
    assert "the identity Argo CD syncs with" in findings[0].message
    assert "an administrator" in findings[1].message
    assert "spec.admissionPolicies.enforcement is Deny" in findings[0].message
    assert "docs/boundaries.md" in findings[0].message


def test_deny_with_only_argo_cd_leaves_nobody_to_relabel_by_hand(repo_copy: Path) -> None:
    identities(repo_copy, "ServiceAccount argocd/argocd-application-controller")
    assert_findings(
        run_check(repo_copy, "admission-lockout"),
        (
            "admission-policies-lock-out",
            "error",
            PROFILE,
            line_of(repo_copy, PROFILE, "platformIdentities:"),
        ),
        contains="an administrator (Group system:masters",
    )


@pytest.mark.parametrize(
    "sync",
    [
        "ServiceAccount kube-system/argocd-manager",  # a cluster `argocd cluster add` registered
        "User argocd-controller",  # a cluster secret holding a user's client certificate
    ],
)
def test_argo_cd_registered_from_elsewhere_is_its_sync_identity(repo_copy: Path, sync: str) -> None:
    identities(repo_copy, sync, "Group system:masters")
    assert run_check(repo_copy, "admission-lockout") == []


def test_another_service_account_is_not_argo_cds(repo_copy: Path) -> None:
    identities(repo_copy, "ServiceAccount kube-system/deployer", "Group system:masters")
    [found] = run_check(repo_copy, "admission-lockout")
    assert "the identity Argo CD syncs with" in found.message


def test_warn_refuses_nobody_so_nothing_is_locked_out(repo_copy: Path) -> None:
    identities(repo_copy)
    edit(repo_copy, PROFILE, "  capacity:", "  admissionPolicies: {enforcement: Warn}\n  capacity:")
    assert run_check(repo_copy, "admission-lockout") == []


def test_a_level_the_tenants_own_job_uses_must_be_approved(repo_copy: Path) -> None:
    write(
        repo_copy,
        JOBS,
        """apiVersion: batch/v1
kind: Job
metadata:
  name: nightly
  namespace: team-a
  labels:
    kueue.x-k8s.io/queue-name: batch
    kueue.x-k8s.io/priority-class: research-standard
spec:
  template:
    spec:
      priorityClassName: tenant-batch
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
""",
    )
    assert_findings(
        run_check(repo_copy, "admission-lockout"),
        (
            "priority-level-not-approved",
            "error",
            JOBS,
            line_of(repo_copy, JOBS, "kueue.x-k8s.io/priority-class"),
        ),
        contains="Job nightly of tenant team-a uses the workload priority class "
        "research-standard, which tenants/team-a/profile.yaml does not approve "
        "(spec.priorityClasses.workload: batch-low, batch-standard)",
    )


def test_a_workload_in_v1beta2_shape_and_a_pod_class_are_read_too(repo_copy: Path) -> None:
    write(
        repo_copy,
        JOBS,
        """apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: imported, namespace: team-a}
spec:
  queueName: batch
  priorityClassRef: {group: kueue.x-k8s.io, kind: WorkloadPriorityClass, name: batch-urgent}
  podSets:
  - name: main
    count: 1
    template:
      spec:
        containers: [{name: c, image: busybox}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: hourly, namespace: team-a}
spec:
  schedule: "@hourly"
  jobTemplate:
    metadata:
      labels: {kueue.x-k8s.io/queue-name: batch}
    spec:
      template:
        spec:
          priorityClassName: system-cluster-critical
          restartPolicy: Never
          containers: [{name: c, image: busybox}]
""",
    )
    found = run_check(repo_copy, "admission-lockout")
    assert [(f.rule.id, f.kind, f.name) for f in found] == [
        ("priority-level-not-approved", "Workload", "imported"),
        ("priority-level-not-approved", "CronJob", "hourly"),
    ]
    assert "workload priority class batch-urgent" in found[0].message
    assert "pod priority class system-cluster-critical" in found[1].message
    assert "(spec.priorityClasses.pod: tenant-batch)" in found[1].message
