"""hold and resume on temporary git repositories made from this repository's content."""

from __future__ import annotations

import difflib
import json
import subprocess
from pathlib import Path

import pytest

from auditor.model import Finding, Report
from auditor.repo.layout import Repository
from auditor.runbook import dryrun
from auditor.runbook import hold as runbook_hold
from tests.conftest import run_line

PROD = "clusters/gpu-prod/clusterqueues.yaml"
STAGING = "clusters/gpu-staging/clusterqueues.yaml"
LEGACY = "clusters/gpu-legacy/clusterqueues.yaml"  # v1beta1: the same edit
EVERY = (LEGACY, PROD, STAGING)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture
def git_repo(repo_copy: Path) -> Path:
    git(repo_copy, "init", "-q", "-b", "main")
    git(repo_copy, "config", "user.email", "oncall@example.org")
    git(repo_copy, "config", "user.name", "On Call")
    git(repo_copy, "add", ".")
    git(repo_copy, "commit", "-q", "-m", "base")
    return repo_copy


def changed_lines(before: str, after: str) -> list[str]:
    return [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


def test_hold_changes_exactly_one_line_per_cluster_on_a_new_branch(git_repo: Path) -> None:
    before = {f: (git_repo / f).read_text() for f in EVERY}
    result = run_line(["kueue-gitops", "--repo", str(git_repo), "hold", "team-a-cq"])
    assert result.exit_code == 0, result.output
    branch = git(git_repo, "branch", "--show-current")
    assert branch.startswith("hold/team-a-cq-")
    assert f"new branch {branch}" in result.output
    for f in EVERY:
        diff = changed_lines(before[f], (git_repo / f).read_text())
        assert diff == [f"+  stopPolicy: Hold  {runbook_hold.MARKER}"], f
    assert git(git_repo, "diff", "--name-only", "main", "HEAD").split() == list(EVERY)
    assert git(git_repo, "status", "--porcelain") == ""
    message = git(git_repo, "log", "-1", "--format=%B")
    assert message.startswith(
        "hold: stop admission to ClusterQueue team-a-cq on gpu-legacy, gpu-prod, gpu-staging"
    )
    assert "Already applied" not in message


def test_the_held_queue_is_the_one_named_and_the_yaml_still_loads(git_repo: Path) -> None:
    run_line(
        ["kueue-gitops", "--repo", str(git_repo), "hold", "team-b-cq", "--cluster", "gpu-prod"]
    )
    text = (git_repo / PROD).read_text()
    assert runbook_hold.stop_policy(text, PROD, "team-b-cq") == "Hold"
    assert runbook_hold.stop_policy(text, PROD, "team-a-cq") is None
    assert runbook_hold.stop_policy((git_repo / STAGING).read_text(), STAGING, "team-b-cq") is None
    loaded = Repository.open(git_repo).load()
    assert loaded.findings == []
    [held] = [r for r in loaded.resources if r.file == PROD and r.name == "team-b-cq"]
    assert held.body["spec"]["stopPolicy"] == "Hold"


def test_hold_then_resume_leaves_the_file_byte_for_byte_as_it_was(git_repo: Path) -> None:
    original = {f: (git_repo / f).read_bytes() for f in EVERY}
    assert run_line(["kueue-gitops", "--repo", str(git_repo), "hold", "team-a-cq"]).exit_code == 0
    # No cluster here: --force skips the folder's dry-run (tests/integration/test_resume.py).
    result = run_line(["kueue-gitops", "--repo", str(git_repo), "resume", "team-a-cq", "--force"])
    assert result.exit_code == 0, result.output
    assert "Resumed with --force" in git(git_repo, "log", "-1", "--format=%B")
    assert git(git_repo, "branch", "--show-current").startswith("resume/team-a-cq-")
    for f in EVERY:
        assert (git_repo / f).read_bytes() == original[f]
        assert git(git_repo, "show", f"HEAD:{f}").encode() + b"\n" == original[f]
    assert git(git_repo, "diff", "main", "HEAD") == ""


def test_an_explicit_stop_policy_line_keeps_its_comment_and_comes_back(git_repo: Path) -> None:
    path = git_repo / PROD
    text = path.read_text().replace(
        "  queueingStrategy: BestEffortFIFO\n",
        "  queueingStrategy: BestEffortFIFO\n  stopPolicy: None   # set by the platform\n",
        1,
    )
    path.write_text(text)
    git(git_repo, "commit", "-qam", "explicit stopPolicy")
    run_line(
        ["kueue-gitops", "--repo", str(git_repo), "hold", "team-a-cq", "--cluster", "gpu-prod"]
    )
    held = path.read_text()
    assert changed_lines(text, held) == [
        "-  stopPolicy: None   # set by the platform",
        "+  stopPolicy: Hold   # set by the platform",
    ]
    run_line(
        [
            "kueue-gitops",
            "--repo",
            str(git_repo),
            "resume",
            "team-a-cq",
            "--cluster",
            "gpu-prod",
            "--force",
        ]
    )
    assert path.read_text() == text


def test_holding_a_held_queue_commits_nothing(git_repo: Path) -> None:
    run_line(["kueue-gitops", "--repo", str(git_repo), "hold", "team-a-cq"])
    head = git(git_repo, "rev-parse", "HEAD")
    result = run_line(["kueue-gitops", "--repo", str(git_repo), "hold", "team-a-cq"])
    assert result.exit_code == 0
    assert "already stopPolicy: Hold" in result.output
    assert "nothing to commit" in result.output
    assert git(git_repo, "rev-parse", "HEAD") == head


def test_an_unknown_queue_is_a_configuration_error(git_repo: Path) -> None:
    result = run_line(["kueue-gitops", "--repo", str(git_repo), "hold", "no-such-cq"])
    assert result.exit_code == 2
    assert "no ClusterQueue 'no-such-cq' in clusters/" in result.stderr
    assert git(git_repo, "branch", "--show-current") == "main"


def test_staged_changes_are_never_swept_into_the_hold_commit(git_repo: Path) -> None:
    (git_repo / "notes.txt").write_text("work in progress\n")
    git(git_repo, "add", "notes.txt")
    result = run_line(["kueue-gitops", "--repo", str(git_repo), "hold", "team-a-cq"])
    assert result.exit_code == 2
    assert "staged changes" in result.stderr
    assert git(git_repo, "branch", "--show-current") == "main"
    assert git(git_repo, "diff", "--name-only") == ""  # the queue files untouched


def test_local_edits_to_the_queue_file_are_never_overwritten(git_repo: Path) -> None:
    path = git_repo / STAGING
    path.write_text(path.read_text() + "# my local note\n")
    result = run_line(["kueue-gitops", "--repo", str(git_repo), "hold", "team-a-cq"])
    assert result.exit_code == 2
    assert f"uncommitted changes in {STAGING}" in result.stderr
    assert path.read_text().endswith("# my local note\n")
    assert git(git_repo, "branch", "--show-current") == "main"


def test_a_flow_style_spec_is_refused_rather_than_reformatted() -> None:
    text = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: q}\nspec: {}\n"
    with pytest.raises(Exception, match="no block-style spec"):
        runbook_hold.set_stop_policy(text, "q.yaml", "q", "Hold")


def test_crlf_files_keep_their_line_endings() -> None:
    text = (
        "apiVersion: kueue.x-k8s.io/v1beta2\r\nkind: ClusterQueue\r\nmetadata:\r\n  name: q\r\n"
        "spec:\r\n  cohortName: pool\r\n"
    )
    held = runbook_hold.set_stop_policy(text, "q.yaml", "q", "Hold")
    assert held.count("\r\n") == text.count("\r\n") + 1
    assert "\n" not in held.replace("\r\n", "")
    assert runbook_hold.set_stop_policy(held, "q.yaml", "q", None) == text


def test_the_hold_line_goes_right_below_spec_so_comments_stay_with_their_keys() -> None:
    text = (
        "kind: ClusterQueue\nmetadata:\n  name: q\nspec:   # quota\n"
        "    # the pool it borrows from\n    cohortName: pool\n"
    )
    held = runbook_hold.set_stop_policy(text, "q.yaml", "q", "Hold")
    assert held.splitlines()[3:6] == [
        "spec:   # quota",
        f"    stopPolicy: Hold  {runbook_hold.MARKER}",
        "    # the pool it borrows from",
    ]
    assert runbook_hold.set_stop_policy(held, "q.yaml", "q", None) == text


def test_the_cli_keeps_a_crlf_file_byte_for_byte(git_repo: Path) -> None:
    path = git_repo / PROD
    original = b"\xef\xbb\xbf" + path.read_bytes().replace(b"\n", b"\r\n")
    path.write_bytes(original)
    git(git_repo, "commit", "-qam", "crlf and a BOM")
    assert run_line(["kueue-gitops", "--repo", str(git_repo), "hold", "team-a-cq"]).exit_code == 0
    held = path.read_bytes()
    assert held.count(b"\r\n") == original.count(b"\r\n") + 1 and held.startswith(b"\xef\xbb\xbf")
    assert b"\n" not in held.replace(b"\r\n", b"")
    resumed = run_line(["kueue-gitops", "--repo", str(git_repo), "resume", "team-a-cq", "--force"])
    assert resumed.exit_code == 0
    assert path.read_bytes() == original


def test_resume_without_force_needs_the_clusters_for_its_dry_run(git_repo: Path) -> None:
    run_line(
        ["kueue-gitops", "--repo", str(git_repo), "hold", "team-a-cq", "--cluster", "gpu-prod"]
    )
    head = git(git_repo, "rev-parse", "HEAD")
    empty = git_repo / "no-clusters.kubeconfig"
    empty.write_text("apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n")
    result = run_line(
        ["kueue-gitops", "--repo", str(git_repo), "resume", "team-a-cq", "--cluster", "gpu-prod",
         "--kubeconfig", str(empty)]
    )  # fmt: skip
    assert result.exit_code != 0 and "gpu-prod" in result.output
    assert git(git_repo, "rev-parse", "HEAD") == head  # nothing resumed without the dry-run


def test_a_refusal_before_the_change_stops_the_resume_with_nothing_committed(
    git_repo: Path,
) -> None:
    hold = ["kueue-gitops", "--repo", str(git_repo), "hold", "team-a-cq", "--cluster", "gpu-prod"]
    held = run_line([*hold, "-o", "json"])  # run_line holds it to report.schema.json
    assert held.exit_code == 0, held.output
    doc = json.loads(held.stdout)
    assert (doc["command"], doc["runbook"]["action"]) == ("hold", "hold")
    assert [t["file"] for t in doc["runbook"]["changed"]] == [PROD]
    head = git(git_repo, "rev-parse", "HEAD")
    refusal = Finding(dryrun.REFUSED, "the API server of gpu-prod refuses it")
    outcome = runbook_hold.run(
        Repository.open(git_repo),
        "team-a-cq",
        hold=False,
        cluster="gpu-prod",
        before_change=lambda _: [refusal],
    )
    assert (outcome.refused, outcome.commit, outcome.applied) == ([refusal], None, [])
    assert git(git_repo, "rev-parse", "HEAD") == head
    assert "stopPolicy: Hold" in (git_repo / PROD).read_text()
    report = Report("resume", findings=outcome.refused, section=outcome)
    assert (report.status, report.exit_code) == ("findings", 1)
