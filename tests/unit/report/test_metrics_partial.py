"""A run limited to some clusters (`--cluster`) rewrites only their series in a metrics file."""

from __future__ import annotations

from pathlib import Path

from auditor.model import ClusterResult, Report
from auditor.report import metrics
from tests.unit.report.metric_samples import NOW, L, drift_report, samples


def test_a_run_of_one_cluster_keeps_the_other_clusters_series(tmp_path: Path) -> None:
    out = tmp_path / "drift.prom"
    metrics.export(drift_report(), metrics_file=out, now=NOW)
    prod_only = Report("drift", clusters=[ClusterResult("gpu-prod")])  # clean now
    metrics.export(prod_only, metrics_file=out, now=NOW + 60, partial=True)
    got = samples(out.read_text())
    staging = L(command="drift", cluster="gpu-staging")
    prod = L(command="drift", cluster="gpu-prod")
    label_drift = L(command="drift", cluster="gpu-staging", category="label", severity="error")
    assert got["kueue_gitops_findings", label_drift] == 1
    assert got["kueue_gitops_audit_complete", staging] == 1
    assert got["kueue_gitops_last_complete_audit_timestamp_seconds", staging] == NOW
    assert got["kueue_gitops_last_complete_audit_timestamp_seconds", prod] == NOW + 60
    assert not [
        k for k in got if k[0] == "kueue_gitops_findings" and ("cluster", "gpu-prod") in k[1]
    ]
    assert got["kueue_gitops_last_audit_timestamp_seconds", L(command="drift")] == NOW + 60


def test_a_run_of_every_cluster_still_rewrites_the_whole_file(tmp_path: Path) -> None:
    out = tmp_path / "drift.prom"
    metrics.export(drift_report(), metrics_file=out, now=NOW)
    metrics.export(Report("drift", clusters=[ClusterResult("gpu-prod")]), metrics_file=out, now=NOW)
    assert not [k for k in samples(out.read_text()) if ("cluster", "gpu-staging") in k[1]]


def test_another_commands_series_stay_in_a_shared_file_on_a_limited_run(tmp_path: Path) -> None:
    out = tmp_path / "all.prom"
    metrics.export(
        Report("validate", clusters=[ClusterResult("gpu-prod")]), metrics_file=out, now=NOW
    )
    metrics.export(drift_report(), metrics_file=out, now=NOW + 60, partial=True)
    got = samples(out.read_text())
    assert got["kueue_gitops_audit_complete", L(command="validate", cluster="gpu-prod")] == 1
    assert got["kueue_gitops_audit_complete", L(command="drift", cluster="gpu-prod")] == 1
