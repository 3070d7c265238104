"""`validate --only STAGE`: the schema stage alone (kubeconform's scope, no policy check run,
no tenant profile read) or the policy checks' findings alone; what reading the repository finds
is reported either way, with the usual exit codes and report."""

from __future__ import annotations

import json
import typing as t
from pathlib import Path

import pytest
from click.testing import CliRunner

from auditor.cli.main import cli
from auditor.validate import checks
from tests.estate import copy_estate

QUEUE = "tenants/team-a/gpu-prod/localqueues.yaml"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The estate with one finding of each stage: an unknown field (schema), a LocalQueue
    whose ClusterQueue does not exist (policy) and malformed YAML (reading the repository)."""
    monkeypatch.setenv("KUEUE_GITOPS_CACHE", str(tmp_path / "cache"))
    root = copy_estate(tmp_path / "repo", "clusters", "tenants", "schemas")
    path = root / QUEUE
    text = path.read_text().replace("clusterQueue: team-a-cq", "clusterQueue: nowhere")
    path.write_text(text + "  colour: blue\n")
    (root / "tenants/team-a/gpu-prod/broken.yaml").write_text("kind: [unclosed\n")
    return root


def run(root: Path, *args: str) -> tuple[int, set[tuple[str, str]]]:
    """The exit code, and the (rule, file) of each finding of the JSON report."""
    argv = ["--repo", str(root), "validate", "--cluster", "gpu-prod", "--no-cache", "-o", "json"]
    result = CliRunner().invoke(cli, [*argv, "--jobs", "1", *args])
    if result.exit_code not in (0, 1):
        raise AssertionError(result.output)
    report = json.loads(result.stdout)
    return result.exit_code, {(f["rule"], f["file"]) for f in report["findings"]}


def test_only_schema_reports_the_schema_and_what_reading_found(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, every = run(repo)
    assert {r for r, f in every if f == QUEUE} >= {"unknown-field", "lq-cluster-queue-missing"}

    def no_policy(*_args: t.Any) -> t.NoReturn:
        raise AssertionError("a policy check ran")

    monkeypatch.setattr(checks, "run", no_policy)
    (repo / "tenants/team-b/profile.yaml").write_text("kind: [unclosed\n")  # read by policy only
    code, schema = run(repo, "--only", "schema")
    assert code == 1
    assert schema == {(r, f) for r, f in every if r == "unknown-field" or f.endswith("broken.yaml")}


def test_only_policy_leaves_the_schema_findings_out(repo: Path) -> None:
    _code, every = run(repo)
    code, policy = run(repo, "--only", "policy")
    assert code == 1
    assert ("lq-cluster-queue-missing", QUEUE) in policy
    assert ("unknown-field", QUEUE) not in policy
    assert any(f.endswith("broken.yaml") for _r, f in policy)
    assert policy == {(r, f) for r, f in every if r != "unknown-field"}
    assert run(repo, "--only", "schema", "--only", "policy")[1] == every


def test_only_schema_is_clean_where_only_policy_findings_are(repo: Path) -> None:
    path = repo / QUEUE
    path.write_text(path.read_text().replace("  colour: blue\n", ""))
    (repo / "tenants/team-a/gpu-prod/broken.yaml").unlink()
    assert run(repo, "--only", "schema") == (0, set())
    assert run(repo)[0] == 1


def test_only_takes_the_stage_names_validate_has(repo: Path) -> None:
    result = CliRunner().invoke(cli, ["--repo", str(repo), "validate", "--only", "drift"])
    assert result.exit_code == 2
    assert "'schema', 'policy'" in result.output
