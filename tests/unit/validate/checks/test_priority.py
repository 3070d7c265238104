from __future__ import annotations

from pathlib import Path

from tests.unit.validate.checks.helpers import assert_findings, edit, line_of, run_check, write

PROFILE = "tenants/team-a/profile.yaml"


def test_platform_classes_and_existing_levels_pass(repo_copy: Path) -> None:
    assert run_check(repo_copy, "priority") == []
    assert run_check(repo_copy, "priority", "gpu-staging") == []


def test_priority_classes_in_a_tenant_folder_are_errors(repo_copy: Path) -> None:
    path = "tenants/team-a/gpu-prod/priority.yaml"
    write(
        repo_copy,
        path,
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\n"
        "metadata: {name: team-a-vip}\nvalue: 1000000\n---\n"
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
        "metadata: {name: team-a-pods}\nvalue: 1000000\n",
    )
    assert_findings(
        run_check(repo_copy, "priority"),
        ("priority-class-in-tenant-folder", "error", path, 2),
        ("priority-class-in-tenant-folder", "error", path, 7),
        contains="define it in clusters/gpu-prod/",
    )


def test_levels_a_tenant_may_use_must_exist_on_each_of_its_clusters(repo_copy: Path) -> None:
    edit(
        repo_copy,
        PROFILE,
        "workload: [batch-low, batch-standard]",
        "workload: [batch-low, batch-vip]",
    )
    edit(repo_copy, PROFILE, "pod: [tenant-batch]", "pod: [tenant-batch, tenant-urgent]")
    findings = run_check(repo_copy, "priority")
    line = line_of(repo_copy, PROFILE, "batch-vip")
    assert_findings(
        findings,
        ("priority-level-missing", "error", PROFILE, line),
        ("priority-level-missing", "error", PROFILE, line_of(repo_copy, PROFILE, "tenant-urgent")),
    )
    [workload] = [f for f in findings if f.path == "spec.priorityClasses.workload[1]"]
    assert "team-a may use WorkloadPriorityClass batch-vip, but gpu-prod defines no such class" in (
        workload.message
    )
    assert (workload.kind, workload.name) == ("TenantProfile", "team-a")
