"""`validate` and `drift` with --metrics-file and --pushgateway, through the CLI."""

from __future__ import annotations

from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import run_line
from tests.estate import ESTATE


def samples(path: Path) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(path.read_text())
        for s in family.samples
    }


def labels(**kw: str) -> frozenset[tuple[str, str]]:
    return frozenset(kw.items())


def test_validate_writes_a_clean_run_as_metrics(tmp_path: Path) -> None:
    out = tmp_path / "validate.prom"
    result = run_line(
        ["kueue-gitops", "--repo", str(ESTATE), "validate", "--metrics-file", str(out)]
    )
    assert result.exit_code == 0, result.output
    got = samples(out)
    for cluster in ("gpu-prod", "gpu-staging"):
        assert got["kueue_gitops_audit_complete", labels(command="validate", cluster=cluster)] == 1
    assert not [name for name, _ in got if name == "kueue_gitops_findings"]


def test_validate_counts_its_findings_by_cluster_category_and_severity(
    repo_copy: Path, tmp_path: Path
) -> None:
    alerts = repo_copy / "clusters/gpu-prod/alerts.yaml"
    alerts.write_text(alerts.read_text().replace("alert: KueueWebhookRejecting", "alert: Other"))
    out = tmp_path / "validate.prom"
    result = run_line(
        [
            "kueue-gitops",
            "--repo",
            str(repo_copy),
            "validate",
            "--schemas",
            str(ESTATE / "schemas"),
            "--metrics-file",
            str(out),
        ]
    )
    assert result.exit_code == 1, result.output
    findings = {
        dict(lbls)["cluster"]: value
        for (name, lbls), value in samples(out).items()
        if name == "kueue_gitops_findings"
        and dict(lbls)["category"] == "alerts"
        and dict(lbls)["severity"] == "error"
    }
    assert findings == {"gpu-prod": 1}


def test_an_unreachable_cluster_is_reported_incomplete_without_a_completion_time(
    tmp_path: Path,
) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: gpu-prod\n"
        "clusters: [{name: x, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "users: [{name: x, user: {token: t}}]\n"
        "contexts: [{name: gpu-prod, context: {cluster: x, user: x}}]\n"
    )
    out = tmp_path / "drift.prom"
    argv = ["kueue-gitops", "--repo", str(ESTATE), "drift", "--cluster", "gpu-prod"]
    result = run_line([*argv, "--kubeconfig", str(kubeconfig), "--metrics-file", str(out)])
    assert result.exit_code == 3, result.output
    got = samples(out)
    assert got["kueue_gitops_audit_complete", labels(command="drift", cluster="gpu-prod")] == 0
    assert "kueue_gitops_last_complete_audit_timestamp_seconds" not in {n for n, _ in got}


def test_a_pushgateway_that_is_not_a_url_is_a_usage_error() -> None:
    result = run_line(
        ["kueue-gitops", "--repo", str(ESTATE), "validate", "--pushgateway", "gw:9091"]
    )
    assert result.exit_code == 2
    assert "'gw:9091' is not an http:// or https:// URL" in result.stderr
