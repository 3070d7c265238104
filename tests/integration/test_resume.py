"""`resume` in the runbook's order: the cluster's folder must pass a server-side dry-run first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from auditor.sandbox import Sandbox
from tests.conftest import own_context, run_line
from tests.integration.runbook_repo import git, synced

QUEUES = "clusters/gpu-prod/clusterqueues.yaml"


@pytest.fixture
def held(fresh_sandbox: Sandbox, repo_copy: Path) -> Path:
    """A git repository whose gpu-prod team-a-cq is held, synced into its own sandbox."""
    git(repo_copy, "init", "-q", "-b", "main")
    git(repo_copy, "config", "user.email", "oncall@example.org")
    git(repo_copy, "config", "user.name", "On Call")
    git(repo_copy, "add", ".")
    git(repo_copy, "commit", "-qm", "base")
    line = ["kueue-gitops", "--repo", str(repo_copy), "hold", "team-a-cq", "--cluster", "gpu-prod"]
    assert run_line(line).exit_code == 0
    synced(fresh_sandbox, repo_copy)
    return repo_copy


def resume(repo: Path, box: Sandbox, *extra: str) -> tuple[int, str]:
    """resume's exit code, and its output (only the report, stdout, with -o json)."""
    result = run_line(
        ["kueue-gitops", "--repo", str(repo), "resume", "team-a-cq", "--cluster", "gpu-prod",
         *own_context(box.kubeconfig), *extra]
    )  # fmt: skip
    return result.exit_code, result.stdout if "json" in extra else result.output


def test_resume_commits_once_the_folder_passes_the_dry_run(
    held: Path, fresh_sandbox: Sandbox
) -> None:
    code, output = resume(held, fresh_sandbox)
    assert code == 0, output
    assert "dry-run: the folder of gpu-prod passed" in output
    message = git(held, "log", "-1", "--format=%B")
    assert message.startswith("resume: admission to ClusterQueue team-a-cq on gpu-prod")
    assert "--force" not in message


def test_resume_refuses_a_folder_the_api_server_would_refuse(
    held: Path, fresh_sandbox: Sandbox
) -> None:
    path = held / QUEUES
    path.write_text(
        path.read_text().replace(
            "queueingStrategy: BestEffortFIFO", "queueingStrategy: Sometimes", 1
        )
    )
    git(held, "commit", "-qam", "a typo in team-a-cq")
    head = git(held, "rev-parse", "HEAD")
    code, output = resume(held, fresh_sandbox)
    assert code == 1, output  # a finding: the refusal
    assert (
        "not resuming team-a-cq: the server-side dry-run of the cluster's folder failed" in output
    )
    code, output = resume(held, fresh_sandbox, "-o", "json")  # held to the report's schema
    assert code == 1, output
    [refused] = json.loads(output)["findings"]
    assert (refused["rule"], refused["cluster"], refused["file"]) == (
        "resume-dry-run-refused",
        "gpu-prod",
        QUEUES,
    )
    assert (refused["kind"], refused["name"]) == ("ClusterQueue", "team-a-cq")
    assert 'Unsupported value: "Sometimes"' in refused["message"]
    assert json.loads(output)["runbook"]["commit"] is None
    assert git(held, "rev-parse", "HEAD") == head  # nothing committed
    assert "stopPolicy: Hold" in path.read_text()

    code, output = resume(held, fresh_sandbox, "--force")
    assert code == 0, output
    message = git(held, "log", "-1", "--format=%B")
    assert "Resumed with --force: the server-side dry-run of the cluster's folder" in message
