"""alert-coverage: the alert set on every cluster, runbooks, thresholds within range."""

from __future__ import annotations

from pathlib import Path

import pytest

from auditor.errors import ConfigError
from auditor.validate.checks import alert_coverage
from tests.unit.validate.checks import helpers
from tests.unit.validate.checks.helpers import assert_findings, edit, line_of, run_check

PROD = "clusters/gpu-prod/alerts.yaml"
RULE_START = "apiVersion: monitoring.coreos.com/v1"


@pytest.mark.parametrize("cluster", ["gpu-prod", "gpu-staging"])
def test_the_repository_has_the_whole_alert_set_in_range(repo_copy: Path, cluster: str) -> None:
    assert run_check(repo_copy, "alert-coverage", cluster) == []


def test_a_missing_alert_is_named(repo_copy: Path) -> None:
    edit(repo_copy, PROD, "alert: KueueWebhookUnavailable", "alert: SomethingElse")
    findings = run_check(repo_copy, "alert-coverage")
    assert_findings(
        findings,
        (
            "alert-missing",
            "error",
            PROD,
            line_of(repo_copy, PROD, "apiVersion: monitoring.coreos.com/v1"),
        ),
        contains="KueueWebhookUnavailable",
    )


def test_a_missing_recording_rule_is_named(repo_copy: Path) -> None:
    edit(
        repo_copy,
        PROD,
        "record: cluster_queue_reason:kueue_preempted_workloads:rate5m",
        "record: something:else:rate5m",
    )
    [finding] = run_check(repo_copy, "alert-coverage")
    assert finding.rule.id == "alert-missing"
    assert "cluster_queue_reason:kueue_preempted_workloads:rate5m" in finding.message


def test_a_cluster_without_alerts_is_told_at_its_profile(repo_copy: Path) -> None:
    text = (repo_copy / PROD).read_text()
    (repo_copy / PROD).write_text(text.split("---\napiVersion: monitoring.coreos.com/v1")[0])
    [finding] = run_check(repo_copy, "alert-coverage")
    assert (finding.rule.id, finding.file, finding.line) == (
        "alert-missing",
        "clusters/gpu-prod/profile.yaml",
        1,
    )
    assert f"{len(alert_coverage.ALERTS) + len(alert_coverage.RECORDS)} of the" in finding.message


def test_a_for_beyond_the_profile_range_is_an_error_on_its_line(repo_copy: Path) -> None:
    # gpu-prod allows a ClusterQueue hold to page after 1h..12h; 1d is beyond it.
    needle = "labels: {severity: warning, failure: stop-policy}"
    line = line_of(repo_copy, PROD, needle) - 1  # the `for:` right above it
    lines = (repo_copy / PROD).read_text().splitlines(keepends=True)
    assert lines[line - 1].strip() == "for: 4h"
    lines[line - 1] = lines[line - 1].replace("4h", "1d")
    (repo_copy / PROD).write_text("".join(lines))
    assert_findings(
        run_check(repo_copy, "alert-coverage"),
        ("alert-threshold-out-of-range", "error", PROD, line),
        contains="KueueClusterQueueHeldTooLong has for 1d, outside 1h to 12h",
    )


def test_the_same_for_is_fine_where_the_profile_allows_it(repo_copy: Path) -> None:
    staging = "clusters/gpu-staging/alerts.yaml"
    edit(repo_copy, staging, "for: 4h", "for: 1d")  # gpu-staging allows up to 2d
    assert run_check(repo_copy, "alert-coverage", "gpu-staging") == []


def test_a_numeric_threshold_beyond_the_range_is_an_error_on_its_expression(
    repo_copy: Path,
) -> None:
    edit(repo_copy, PROD, "> 0.25", "> 0.9")
    [finding] = run_check(repo_copy, "alert-coverage")
    assert finding.rule.id == "alert-threshold-out-of-range"
    assert "KueueWebhookRejecting has threshold 0.9, outside 0.05 to 0.5" in finding.message
    expr_line = line_of(repo_copy, PROD, "- alert: KueueWebhookRejecting") + 1
    assert finding.line == expr_line


def test_an_alert_without_a_runbook_is_an_error(repo_copy: Path) -> None:
    text = (repo_copy / PROD).read_text()
    head, _, tail = text.partition("- alert: KueueGitOpsAuditStale")
    tail = tail.replace("            runbook_url:", "            dashboard_url:", 1)
    (repo_copy / PROD).write_text(head + "- alert: KueueGitOpsAuditStale" + tail)
    assert_findings(
        run_check(repo_copy, "alert-coverage"),
        (
            "alert-runbook-missing",
            "error",
            PROD,
            line_of(repo_copy, PROD, "- alert: KueueGitOpsAuditStale"),
        ),
        contains="KueueGitOpsAuditStale has no runbook_url",
    )


def test_a_rule_copied_from_another_cluster_is_an_error(repo_copy: Path) -> None:
    staging = "clusters/gpu-staging/alerts.yaml"
    (repo_copy / staging).write_text((repo_copy / PROD).read_text())
    findings = run_check(repo_copy, "alert-coverage", "gpu-staging")
    assert {f.rule.id for f in findings} == {"alert-other-cluster"}
    assert len(findings) == 2  # the drift alert and the stale-audit alert
    assert all("cluster='gpu-prod'" in f.message for f in findings)
    assert {f.line for f in findings} == {
        line_of(repo_copy, staging, "- alert: KueueGitOpsDriftDetected") + 1,
        line_of(repo_copy, staging, "- alert: KueueGitOpsAuditStale") + 1,
    }


def test_a_profile_range_that_is_not_a_duration_is_a_configuration_error(
    repo_copy: Path,
) -> None:
    profile = "clusters/gpu-prod/profile.yaml"
    edit(repo_copy, profile, "{for: {min: 15m, max: 1h}}", "{for: {min: 15m, max: an hour}}")
    with pytest.raises(ConfigError, match=r"clusters/gpu-prod/profile\.yaml:\d+: .*alerts"):
        helpers.context(repo_copy)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("15m", 900), ("1h30m", 5400), ("2d", 172800), ("500ms", 0.5), ("1h 30m", None), ("", None)],
)
def test_prometheus_durations(text: str, expected: float | None) -> None:
    assert alert_coverage.seconds(text) == expected


def test_rules_reading_gauges_kueue_does_not_export_are_an_error_at_the_configuration(
    repo_copy: Path,
) -> None:
    config = "clusters/gpu-prod/kueue/manager-config.yaml"
    edit(
        repo_copy, config, "enableClusterQueueResources: true", "enableClusterQueueResources: false"
    )
    [finding] = [
        f
        for f in run_check(repo_copy, "alert-coverage")
        if f.rule.id == "alert-metric-not-exported"
    ]
    assert (finding.file, finding.line) == (
        config,
        line_of(repo_copy, config, "enableClusterQueueResources: false"),
    )
    assert "exports none of kueue_cluster_queue_nominal_quota, kueue_cluster_queue_resource_" in (
        finding.message
    )
    assert "cluster_queue_flavor_resource:kueue_borrowed_over_nominal:ratio" in finding.message
    text = (repo_copy / config).read_text().splitlines(keepends=True)
    (repo_copy / config).write_text("".join(x for x in text if "enableClusterQueue" not in x))
    [finding] = [
        f
        for f in run_check(repo_copy, "alert-coverage")
        if f.rule.id == "alert-metric-not-exported"
    ]
    assert finding.line == line_of(repo_copy, config, "    metrics:")
