"""Check fair-sharing: the settings the cluster's Kueue release ignores or mishandles under (or
without) fair sharing, judged by the Configuration the repository gives that cluster."""

from __future__ import annotations

from pathlib import Path

from tests.unit.validate.checks.helpers import assert_findings, edit, line_of, run_check

STAGING = "clusters/gpu-staging/kueue/manager-config.yaml"
LEGACY = "clusters/gpu-legacy/kueue/manager-config.yaml"
QUEUES = "clusters/gpu-staging/clusterqueues.yaml"
COHORTS = "clusters/gpu-staging/cohorts.yaml"
LOCAL = "tenants/team-a/gpu-staging/localqueues.yaml"
INTEGRATIONS = "    integrations:\n"


def configure(repo: Path, path: str, block: str) -> None:
    """Add top-level fields to the Configuration inside the cluster's ConfigMap."""
    edit(repo, path, INTEGRATIONS, block + INTEGRATIONS)


def weigh(repo: Path, path: str, after: str, weight: str, indent: str = "  ") -> None:
    edit(repo, path, after, f"{after}{indent}fairSharing:\n{indent}  weight: {weight}\n")


def test_the_repository_passes(repo_copy: Path) -> None:
    for cluster in ("gpu-prod", "gpu-staging", "gpu-legacy"):
        assert run_check(repo_copy, "fair-sharing", cluster) == [], cluster


def test_fair_sharing_with_borrow_within_cohort_is_an_error_at_each_queue(repo_copy: Path) -> None:
    configure(repo_copy, STAGING, "    fairSharing: {}\n")
    findings = run_check(repo_copy, "fair-sharing", "gpu-staging")
    at = [line_of(repo_copy, QUEUES, "policy: LowerPriority", n) for n in (1, 2)]
    assert_findings(
        findings,
        *[("fair-sharing-borrow-within-cohort", "error", QUEUES, line) for line in at],
        contains="kubernetes-sigs/kueue#3779",
    )
    assert "Kueue v0.19.2 supports borrowWithinCohort with classical preemption only" in (
        findings[0].message
    )


def test_a_v1beta1_configuration_turns_fair_sharing_on_with_enable(repo_copy: Path) -> None:
    configure(repo_copy, LEGACY, "    fairSharing: {enable: false}\n")
    assert run_check(repo_copy, "fair-sharing", "gpu-legacy") == []
    edit(repo_copy, LEGACY, "{enable: false}", "{enable: true}")
    rules = {f.rule.id for f in run_check(repo_copy, "fair-sharing", "gpu-legacy")}
    assert rules == {"fair-sharing-borrow-within-cohort"}


def test_weights_count_only_where_their_mode_is_on(repo_copy: Path) -> None:
    weigh(repo_copy, COHORTS, "spec:\n  parentName: example-org\n", '"0.5"')
    weigh(repo_copy, LOCAL, "  clusterQueue: team-a-cq\n", "2", indent="  ")
    findings = run_check(repo_copy, "fair-sharing", "gpu-staging")
    assert_findings(
        findings,
        ("fair-sharing-weight-ignored", "warning", COHORTS, line_of(repo_copy, COHORTS, "weight")),
        ("fair-sharing-weight-ignored", "warning", LOCAL, line_of(repo_copy, LOCAL, "weight")),
        contains="the weight changes nothing",
    )
    # Fair sharing makes the Cohort's count; Admission Fair Sharing the LocalQueue's.
    configure(repo_copy, STAGING, "    fairSharing: {}\n")
    assert ignored(repo_copy) == [LOCAL]
    configure(repo_copy, STAGING, "    admissionFairSharing: {usageHalfLifeTime: 24h}\n")
    assert ignored(repo_copy) == []


def ignored(repo: Path) -> list[str | None]:
    findings = run_check(repo, "fair-sharing", "gpu-staging")
    return [f.file for f in findings if f.rule.id == "fair-sharing-weight-ignored"]


def test_admission_fair_sharing_needs_its_gate(repo_copy: Path) -> None:
    weigh(repo_copy, LOCAL, "  clusterQueue: team-a-cq\n", "2")
    configure(
        repo_copy,
        STAGING,
        "    admissionFairSharing: {usageHalfLifeTime: 0s}\n"
        "    featureGates: {AdmissionFairSharing: false}\n",
    )
    findings = run_check(repo_copy, "fair-sharing", "gpu-staging")
    # Off by its gate: the half-life does not matter, the LocalQueue's weight counts for nothing.
    assert [(f.rule.id, f.file) for f in findings] == [("fair-sharing-weight-ignored", LOCAL)]
    assert "AdmissionFairSharing gate" in findings[0].message


def test_a_zero_half_life_is_an_error_at_its_line(repo_copy: Path) -> None:
    configure(repo_copy, STAGING, "    admissionFairSharing:\n      usageHalfLifeTime: 0m0s\n")
    assert_findings(
        run_check(repo_copy, "fair-sharing", "gpu-staging"),
        (
            "admission-fair-sharing-no-decay",
            "error",
            STAGING,
            line_of(repo_copy, STAGING, "usageHalfLifeTime: 0m0s"),
        ),
        contains="sets usageHalfLifeTime: 0m0s",
    )


def test_a_half_life_left_out_is_zero(repo_copy: Path) -> None:
    configure(repo_copy, STAGING, "    admissionFairSharing:\n      usageSamplingInterval: 1m\n")
    [finding] = run_check(repo_copy, "fair-sharing", "gpu-staging")
    assert finding.rule.id == "admission-fair-sharing-no-decay"
    assert finding.line == line_of(repo_copy, STAGING, "admissionFairSharing:")
    assert "leaves usageHalfLifeTime out (0s)" in finding.message
    assert finding.path == "controller_manager_config.yaml: admissionFairSharing"


def test_a_positive_half_life_passes(repo_copy: Path) -> None:
    for half_life in ("168h", "1.5h", "90s"):
        configure(
            repo_copy, STAGING, f"    admissionFairSharing: {{usageHalfLifeTime: {half_life}}}\n"
        )
        assert run_check(repo_copy, "fair-sharing", "gpu-staging") == [], half_life
        edit(
            repo_copy,
            STAGING,
            f"    admissionFairSharing: {{usageHalfLifeTime: {half_life}}}\n",
            "",
        )
