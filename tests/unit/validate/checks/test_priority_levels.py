from __future__ import annotations

from pathlib import Path

from tests.unit.validate.checks.helpers import assert_findings, edit, line_of, run_check, write

PCS = "clusters/gpu-prod/priorityclasses.yaml"
PROFILE = "clusters/gpu-prod/profile.yaml"
TENANT = "tenants/team-a/profile.yaml"


def test_the_committed_levels_keep_tenants_below_the_platform(repo_copy: Path) -> None:
    assert run_check(repo_copy, "priority-levels") == []
    assert run_check(repo_copy, "priority-levels", "gpu-staging") == []


def test_a_tenant_pod_class_that_preempts_with_a_huge_value_is_two_errors(repo_copy: Path) -> None:
    edit(repo_copy, PCS, "value: 1000\nglobalDefault", "value: 1000000000\nglobalDefault")
    edit(repo_copy, PCS, "preemptionPolicy: Never\n", "")
    assert_findings(
        run_check(repo_copy, "priority-levels"),
        (
            "priority-class-preempts",
            "error",
            PCS,
            line_of(repo_copy, PCS, "kind: PriorityClass") - 1,
        ),
        ("priority-above-platform", "error", PCS, line_of(repo_copy, PCS, "value: 1000000000")),
        contains="PriorityClass tenant-batch has",
    )


def test_a_global_default_class_counts_as_usable_by_tenants(repo_copy: Path) -> None:
    write(
        repo_copy,
        "clusters/gpu-prod/default-priority.yaml",
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: everyone}\n"
        "value: 500\nglobalDefault: true\npreemptionPolicy: PreemptLowerPriority\n",
    )
    assert_findings(
        run_check(repo_copy, "priority-levels"),
        ("priority-class-preempts", "error", "clusters/gpu-prod/default-priority.yaml", 6),
        contains="it is the global default",
    )


def test_without_declared_platform_levels_the_classes_no_tenant_lists_are_the_platforms(
    repo_copy: Path,
) -> None:
    text = (repo_copy / PROFILE).read_text()
    start, end = text.index("  priority:\n"), text.index("  verify:")
    (repo_copy / PROFILE).write_text(text[:start] + text[end:])
    assert run_check(repo_copy, "priority-levels") == []
    edit(repo_copy, TENANT, "workload: [batch-low, batch-standard]", "workload: [batch-low]")
    edit(repo_copy, PCS, "value: 1000\ndescription: Default", "value: 20000\ndescription: Default")
    [finding] = run_check(repo_copy, "priority-levels")  # batch-standard is team-b's still
    assert finding.rule.id == "priority-above-platform"
    assert "but the platform's WorkloadPriorityClass batch-critical is 10000" in finding.message


def test_workload_levels_must_rise_in_the_declared_order(repo_copy: Path) -> None:
    edit(repo_copy, PCS, "value: 100\n", "value: 5000\n")
    assert_findings(
        run_check(repo_copy, "priority-levels"),
        ("priority-order", "error", PCS, line_of(repo_copy, PCS, "value: 1000")),
        contains="WorkloadPriorityClass batch-standard has value 1000, not above batch-low (5000)",
    )
