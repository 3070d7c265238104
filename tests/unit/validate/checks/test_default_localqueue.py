from __future__ import annotations

from pathlib import Path

from tests.unit.validate.checks.helpers import assert_findings, edit, line_of, run_check

LQ = "tenants/team-a/gpu-prod/localqueues.yaml"


def test_a_named_queue_passes(repo_copy: Path) -> None:
    assert run_check(repo_copy, "default-localqueue") == []


def test_a_queue_named_default_warns_what_it_means(repo_copy: Path) -> None:
    edit(repo_copy, LQ, "  name: batch", "  name: default")
    assert_findings(
        run_check(repo_copy, "default-localqueue"),
        ("default-localqueue", "warning", LQ, line_of(repo_copy, LQ, "name: default")),
        contains="every job in namespace team-a without a kueue.x-k8s.io/queue-name label",
    )


def test_a_release_without_local_queue_defaulting_is_not_warned(repo_copy: Path) -> None:
    legacy = "tenants/team-a/gpu-legacy/localqueues.yaml"
    edit(repo_copy, legacy, "  name: batch", "  name: default")
    assert run_check(repo_copy, "default-localqueue", "gpu-legacy") == []  # Kueue v0.9.1
    staging = "tenants/team-a/gpu-staging/localqueues.yaml"
    edit(repo_copy, staging, "  name: batch", "  name: default")
    [finding] = run_check(repo_copy, "default-localqueue", "gpu-staging")
    assert "Kueue v0.19.2 defaults such jobs to the LocalQueue named default" in finding.message
