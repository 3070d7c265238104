"""`sandbox status` and `sandbox env` speak of this repository's sandboxes, not every one the
machine runs (another checkout's, another project's); `--all` lists them all."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

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
