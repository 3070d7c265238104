from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT, run_line
from tests.estate import ESTATE


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
    result = run_line(["kueue-gitops", "--repo", str(ESTATE), "status", "--cluster", "nope"])
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
            str(ESTATE),
            "status",
            "--cluster",
            "gpu-prod",
            "--kubeconfig",
            str(kubeconfig),
        ]
    )
    assert result.exit_code == 3
    assert "gpu-prod" in result.stderr and "unreachable" in result.stderr


def test_validate_keeps_its_every_run_notes_for_verbose_and_v_q_work_after_the_command(
    tmp_path: Path,
) -> None:
    """A pre-commit hook's output is the report: the transition-rule count (the same on every
    run) is a -v detail; -v and -q are accepted after the command as before it."""
    line = ["kueue-gitops", "--repo", str(ESTATE), "validate", "--cluster", "gpu-prod"]
    plain = run_line(line)
    assert plain.exit_code == 0 and plain.stderr == "", plain.stderr
    for verbose in ([*line, "-v"], ["kueue-gitops", "-v", *line[1:]]):
        said = run_line(verbose)
        assert said.exit_code == 0 and "CEL transition rule(s) (oldSelf)" in said.stderr
    for name, quiet in (("noisy", []), ("quiet", ["-q"])):
        init = ["kueue-gitops", "--repo", str(tmp_path / name), "init", "--cluster", "a"]
        said = run_line([*init, "--repo-url", "https://example.org/p/r.git", *quiet])
        assert said.exit_code == 0, said.output
        assert ("note: the clusters' owner is @p/platform" in said.stderr) is not bool(quiet)
