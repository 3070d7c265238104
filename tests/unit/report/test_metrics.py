"""The auditor's results as Prometheus metrics, read back with the Prometheus text parser."""

from __future__ import annotations

import http.server
import socket
import threading
import typing as t
from pathlib import Path

import pytest

from auditor.model import Report
from auditor.report import metrics
from tests.unit.report.metric_samples import NOW, L, drift_report, samples


def test_textfile_counts_findings_by_cluster_category_and_severity(tmp_path: Path) -> None:
    out = tmp_path / "drift.prom"
    metrics.export(drift_report(), metrics_file=out, now=NOW)
    got = samples(out.read_text())
    findings = {
        (dict(labels)["cluster"], dict(labels)["category"], dict(labels)["severity"]): value
        for (name, labels), value in got.items()
        if name == "kueue_gitops_findings" and dict(labels)["command"] == "drift"
    }
    assert findings == {
        ("gpu-prod", "quota", "error"): 2,
        ("gpu-prod", "preemption", "warning"): 1,
        ("gpu-staging", "label", "error"): 1,
    }
    for cluster in ("gpu-prod", "gpu-staging"):
        labels = L(command="drift", cluster=cluster)
        assert got["kueue_gitops_audit_complete", labels] == 1
        assert got["kueue_gitops_last_complete_audit_timestamp_seconds", labels] == NOW
    assert got["kueue_gitops_last_audit_timestamp_seconds", L(command="drift")] == NOW


def test_an_incomplete_run_keeps_the_last_complete_time_of_the_previous_file(
    tmp_path: Path,
) -> None:
    out = tmp_path / "drift.prom"
    metrics.export(drift_report(), metrics_file=out, now=NOW)
    metrics.export(drift_report(prod_ok=False), metrics_file=out, now=NOW + 3600)
    got = samples(out.read_text())
    prod = L(command="drift", cluster="gpu-prod")
    staging = L(command="drift", cluster="gpu-staging")
    assert got["kueue_gitops_audit_complete", prod] == 0
    assert got["kueue_gitops_last_complete_audit_timestamp_seconds", prod] == NOW
    assert got["kueue_gitops_last_complete_audit_timestamp_seconds", staging] == NOW + 3600
    assert got["kueue_gitops_last_audit_timestamp_seconds", L(command="drift")] == NOW + 3600


def test_a_first_run_that_is_incomplete_reports_no_completion_time(tmp_path: Path) -> None:
    out = tmp_path / "drift.prom"
    metrics.export(drift_report(prod_ok=False), metrics_file=out, now=NOW)
    stamps = {
        dict(labels)["cluster"]
        for name, labels in samples(out.read_text())
        if name == "kueue_gitops_last_complete_audit_timestamp_seconds"
    }
    assert stamps == {"gpu-staging"}


def test_a_clean_repo_wide_validate_still_reports_its_completion(tmp_path: Path) -> None:
    out = tmp_path / "validate.prom"
    metrics.export(Report("validate"), metrics_file=out, now=NOW)
    got = samples(out.read_text())
    assert not [k for k in got if k[0] == "kueue_gitops_findings"]
    assert got["kueue_gitops_audit_complete", L(command="validate", cluster="")] == 1


def test_a_textfile_that_is_not_prometheus_text_is_a_clear_error(tmp_path: Path) -> None:
    out = tmp_path / "drift.prom"
    out.write_text("this is { not metrics\n")
    with pytest.raises(metrics.MetricsExportError, match=r"drift\.prom: not a Prometheus text"):
        metrics.export(drift_report(), metrics_file=out)


class _Gateway(http.server.BaseHTTPRequestHandler):
    """A stand-in Pushgateway on loopback: records each request, answers 200."""

    received: t.ClassVar[list[tuple[str, str, str]]] = []

    def _record(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
        self.received.append((self.command, self.path, body))
        self.send_response(200)
        self.end_headers()

    do_PUT = do_POST = _record

    def log_message(self, *args: t.Any) -> None:
        pass


@pytest.fixture
def gateway() -> t.Iterator[tuple[str, list[tuple[str, str, str]]]]:
    _Gateway.received = []
    server = http.server.HTTPServer(("127.0.0.1", 0), _Gateway)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", _Gateway.received
    finally:
        server.shutdown()
        server.server_close()


def test_push_replaces_complete_groups_and_only_adds_to_incomplete_ones(
    gateway: tuple[str, list[tuple[str, str, str]]],
) -> None:
    url, received = gateway
    metrics.export(drift_report(prod_ok=False), pushgateway=url, now=NOW)
    group = "/metrics/job/kueue-gitops/cluster/{}/command/drift"
    by_path = {path: (method, body) for method, path, body in received}
    assert set(by_path) == {group.format("gpu-prod"), group.format("gpu-staging")}
    prod_method, prod_body = by_path[group.format("gpu-prod")]
    staging_method, staging_body = by_path[group.format("gpu-staging")]
    assert (prod_method, staging_method) == ("POST", "PUT")
    prod = samples(prod_body)
    assert {labels for name, labels in prod if name == "kueue_gitops_findings"} == {
        L(command="drift", cluster="gpu-prod", category="quota", severity="error"),
        L(command="drift", cluster="gpu-prod", category="preemption", severity="warning"),
    }
    assert "kueue_gitops_last_complete_audit_timestamp_seconds" not in {n for n, _ in prod}
    staging = samples(staging_body)
    stamp = staging[
        "kueue_gitops_last_complete_audit_timestamp_seconds",
        L(command="drift", cluster="gpu-staging"),
    ]
    assert stamp == NOW


def test_an_unreachable_gateway_is_an_error_with_exit_code_3() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, never listening: connection refused
        with pytest.raises(metrics.MetricsExportError, match="cannot push metrics") as exc:
            metrics.export(drift_report(), pushgateway=f"http://127.0.0.1:{port}")
    assert exc.value.exit_code == 3
