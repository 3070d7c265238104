from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT, run_line


def test_help_lists_exit_codes() -> None:
    result = run_line(["kueue-gitops", "--help"])
    assert result.exit_code == 0
    assert "3 could not" in result.output


def test_python_dash_m_runs_the_same_cli() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "auditor", "--help"],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert proc.returncode == 0 and "sandbox" in proc.stdout


def test_unknown_cluster_is_a_usage_error() -> None:
    result = run_line(["kueue-gitops", "--repo", str(ROOT), "status", "--cluster", "nope"])
    assert result.exit_code == 2
    assert "no cluster 'nope'" in result.stderr


def test_outside_a_repository_is_a_usage_error(tmp_path: Path) -> None:
    result = run_line(["kueue-gitops", "--repo", str(tmp_path), "status", "--cluster", "x"])
    assert result.exit_code == 2
    assert "no kueue-gitops repository" in result.stderr


def test_unreachable_cluster_exits_3_and_names_it(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: gpu-prod\n"
        "clusters: [{name: dead, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: gpu-prod, context: {cluster: dead, user: u}}]\n"
    )
    result = run_line(
        [
            "kueue-gitops",
            "--repo",
            str(ROOT),
            "status",
            "--cluster",
            "gpu-prod",
            "--kubeconfig",
            str(kubeconfig),
        ]
    )
    assert result.exit_code == 3
    assert "gpu-prod" in result.stderr and "unreachable" in result.stderr
