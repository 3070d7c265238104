"""`sandbox status` and `sandbox env` speak of this repository's sandboxes, not every one the
machine runs (another checkout's, another project's); `--all` lists them all."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from auditor.cli import sandbox as cli_sandbox
from auditor.live import apply as live_apply
from auditor.live.apply import Applied
from auditor.model import Resource
from tests.conftest import run_line


@pytest.fixture
def boxes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two running sandboxes as `sandbox up` records them: one named like a repository
    cluster, one like no cluster of it (their processes: this test's own, alive)."""
    root = tmp_path / "sandboxes"
    for name, port in (("gpu-staging", 6443), ("elsewhere", 7443)):
        (root / name).mkdir(parents=True)
        state = {"name": name, "api_port": port, "etcd_port": 1, "etcd_peer_port": 2,
                 "pids": {"kube-apiserver": os.getpid()}}  # fmt: skip
        (root / name / "state.json").write_text(json.dumps(state))
    monkeypatch.setenv("KUEUE_GITOPS_SANDBOXES", str(root))
    return root


def test_status_and_env_list_only_this_repositorys_sandboxes(boxes: Path, repo_copy: Path) -> None:
    status = run_line(["kueue-gitops", "--repo", str(repo_copy), "sandbox", "status"])
    assert status.exit_code == 0
    assert [line.split(":")[0] for line in status.stdout.splitlines()] == ["gpu-staging"]
    assert "elsewhere" in status.stderr and "--all" in status.stderr  # not hidden silently
    env = run_line(["kueue-gitops", "--repo", str(repo_copy), "sandbox", "env"])
    assert env.stdout.strip() == f"export KUBECONFIG={boxes / 'gpu-staging' / 'kubeconfig'}"
    every = run_line(["kueue-gitops", "--repo", str(repo_copy), "sandbox", "status", "--all"])
    assert [line.split(":")[0] for line in every.stdout.splitlines()] == [
        "elsewhere",
        "gpu-staging",
    ]


def test_a_stale_sandbox_is_an_error_naming_it_after_the_list(boxes: Path, repo_copy: Path) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()  # its pid: a process that died
    state = json.loads((boxes / "gpu-staging" / "state.json").read_text())
    state["pids"] = {"kube-apiserver": dead.pid}
    (boxes / "gpu-staging" / "state.json").write_text(json.dumps(state))
    status = run_line(["kueue-gitops", "--repo", str(repo_copy), "sandbox", "status"])
    assert status.exit_code == 3
    assert status.stdout.startswith("gpu-staging: STALE")
    assert "gpu-staging" in status.stderr and "sandbox down gpu-staging" in status.stderr


class _Box:
    """A running sandbox, as far as `sandbox apply` asks (its API server is an integration
    test's: tests/integration/test_sandbox.py)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def running(self) -> bool:
        return True

    def connect(self) -> object:
        return object()


def test_sandbox_apply_reports_rejected_objects_as_the_clusters_errors(
    repo_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An object the API server refuses leaves the sync incomplete (exit 3), named in the
    report, never an exit 1 without a finding behind it."""

    def apply_all(_cluster: object, resources: list[Resource]) -> list[Applied]:
        return [Applied(r, "admission webhook denied it" if i == 0 else None)
                for i, r in enumerate(resources)]  # fmt: skip

    monkeypatch.setattr(cli_sandbox, "Sandbox", _Box)
    monkeypatch.setattr(live_apply, "apply_all", apply_all)
    argv = ["kueue-gitops", "--repo", str(repo_copy), "sandbox", "apply", "--cluster", "gpu-prod"]
    result = run_line([*argv, "-o", "json"])
    assert result.exit_code == 3, result.output
    report = json.loads(result.stdout)
    assert (report["command"], report["status"], report["findings"]) == (
        "sandbox apply",
        "incomplete",
        [],
    )
    [error] = report["clusters"][0]["errors"]
    assert "clusters/gpu-prod/" in error and "admission webhook denied it" in error
    assert "1 rejected" in result.stderr

    def all_applied(_cluster: object, resources: list[Resource]) -> list[Applied]:
        return [Applied(r) for r in resources]

    monkeypatch.setattr(live_apply, "apply_all", all_applied)
    clean = run_line([*argv, "-o", "json"])
    assert clean.exit_code == 0 and json.loads(clean.stdout)["status"] == "clean"
