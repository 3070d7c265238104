"""`kueue-gitops github ...`: drift issues, the PR comment and the schema PR, run through the CLI
against a fake of our own GitHubApi boundary."""

from __future__ import annotations

import json
import typing as t
from pathlib import Path

import pytest

from auditor.github import issues
from auditor.github.rest import RestGitHub
from auditor.report.markdown import SPLIT
from tests.conftest import run_line
from tests.estate import ESTATE
from tests.unit.github.fake_github import FakeGitHub, github

DRIFT = {
    "rule": "drift-quota",
    "severity": "error",
    "category": "quota",
    "cluster": "gpu-prod",
    "apiVersion": "kueue.x-k8s.io/v1beta2",
    "kind": "ClusterQueue",
    "namespace": None,
    "name": "team-a-cq",
    "file": "clusters/gpu-prod/clusterqueues.yaml",
    "line": 35,
    "path": "spec.resourceGroups[0].flavors[a100].resources[nvidia.com/gpu].nominalQuota",
    "change": "modified",
    "desired": "16",
    "live": "24",
    "message": "nominalQuota was raised to 24 on the cluster; the repository says 16",
}


def report(status: str, *findings: dict[str, t.Any]) -> dict[str, t.Any]:
    """A drift report as `drift -o json` writes it."""
    cluster = {"name": "gpu-prod", "status": "ok", "errors": []}
    if status == "incomplete":
        cluster.update(status="incomplete", errors=["LIST ClusterQueues: connection refused"])
    return {"schemaVersion": 1, "command": "drift", "status": status,
            "clusters": [cluster], "findings": list(findings)}  # fmt: skip


def run(
    api: FakeGitHub, tmp_path: Path, doc: t.Any, cluster: str = "gpu-prod", *extra: str
) -> tuple[int, str]:
    path = tmp_path / f"{cluster}.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    argv = [
        "drift-issue",
        "--cluster",
        cluster,
        "--report",
        str(path),
        "--run-url",
        "https://run/1",
        *extra,
    ]
    result = github(api, *argv)
    return result.exit_code, result.stdout


def test_drift_opens_one_labelled_issue_with_a_table_then_updates_it(tmp_path: Path) -> None:
    api = FakeGitHub()
    assert run(api, tmp_path, report("findings", DRIFT)) == (0, "drift-issue: created #1\n")
    issue = api.issues_by_number[1]
    assert (issue.title, issue.labels, issue.state) == (
        "Drift on cluster gpu-prod",
        ["kueue-drift", "cluster:gpu-prod"],
        "open",
    )
    assert issue.body.startswith("<!-- kueue-gitops-drift cluster=gpu-prod fingerprint=")
    assert "| error | quota | ClusterQueue team-a-cq | `spec.resourceGroups[0]" in issue.body
    assert "| 16 | 24 | `clusters/gpu-prod/clusterqueues.yaml:35` |" in issue.body
    # The same drift on the next run: the body is refreshed, nobody is notified again.
    assert run(api, tmp_path, report("findings", DRIFT)) == (0, "drift-issue: updated #1\n")
    assert api.writes == ["create #1", "edit #1"] and 1 not in api.comments_by_issue
    # The drift changes: a comment says so.
    worse = {**DRIFT, "live": "32"}
    assert run(api, tmp_path, report("findings", worse))[0] == 0
    assert api.writes[-2:] == ["comment #1", "edit #1"]
    assert "| 16 | 32 |" in api.issues_by_number[1].body
    assert len(api.issues_by_number) == 1


def test_drift_gone_closes_the_issue_and_its_return_reopens_it(tmp_path: Path) -> None:
    api = FakeGitHub()
    run(api, tmp_path, report("findings", DRIFT))
    assert run(api, tmp_path, report("clean")) == (0, "drift-issue: closed #1\n")
    assert api.issues_by_number[1].state == "closed"
    [closing] = api.comments_by_issue[1]
    assert closing.body == "No drift on `gpu-prod` any more ([run](https://run/1)); closing."
    assert run(api, tmp_path, report("clean")) == (0, "drift-issue: none\n")
    assert run(api, tmp_path, report("findings", DRIFT)) == (0, "drift-issue: reopened #1\n")
    assert api.issues_by_number[1].state == "open" and len(api.issues_by_number) == 1


def test_incomplete_run_touches_nothing_and_fails(tmp_path: Path) -> None:
    api = FakeGitHub()
    run(api, tmp_path, report("findings", DRIFT))
    api.writes.clear()
    code, out = run(api, tmp_path, report("incomplete"))
    assert code == 3 and "incomplete" in out
    assert api.writes == [] and api.issues_by_number[1].state == "open"


def test_each_cluster_has_its_own_issue(tmp_path: Path) -> None:
    api = FakeGitHub()
    run(api, tmp_path, report("findings", DRIFT), cluster="gpu-prod")
    run(api, tmp_path, report("findings", {**DRIFT, "cluster": "gpu-staging"}), "gpu-staging")
    run(api, tmp_path, report("clean"), cluster="gpu-staging")
    states = {i.labels[1]: i.state for i in api.issues_by_number.values()}
    assert states == {"cluster:gpu-prod": "open", "cluster:gpu-staging": "closed"}


BROKEN = {
    "empty": "",
    "an-error-line": "Error: cluster gpu-prod unreachable\n",
    "no-status": '{"findings": []}',
    "clean-but-an-error": json.dumps(report("clean", DRIFT)),
    "line-as-text": json.dumps(report("findings", {**DRIFT, "line": "35"})),
    "finding-missing-keys": json.dumps(report("findings", {"rule": "r", "message": "m"})),
    "a-plan-report": json.dumps(report("clean") | {"command": "plan"}),
    "a-rule-not-in-the-catalogue": json.dumps(report("findings", {**DRIFT, "rule": "drift-x"})),
    "a-severity-not-the-catalogues": json.dumps(
        report("findings", {**DRIFT, "severity": "warning"})
    ),
}


@pytest.mark.parametrize("text", BROKEN.values(), ids=BROKEN.keys())
def test_a_missing_or_broken_report_is_an_error_never_a_close(tmp_path: Path, text: str) -> None:
    api = FakeGitHub()
    run(api, tmp_path, report("findings", DRIFT))
    code, _ = run(api, tmp_path, text)
    assert code == 2 and api.issues_by_number[1].state == "open"


def test_the_error_names_what_breaks_the_report_contract(tmp_path: Path) -> None:
    path = tmp_path / "drift.json"
    path.write_text(json.dumps(report("findings", {**DRIFT, "severity": "fatal"})))
    result = github(FakeGitHub(), "drift-issue", "--cluster", "gpu-prod", "--report", str(path))
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: {path}: not a kueue-gitops JSON report: $.findings[0].severity: "
        "'fatal' is not one of ['error', 'warning']\n"
    )
    missing = github(FakeGitHub(), "drift-issue", "--cluster", "c", "--report", "nope.json")
    assert missing.exit_code == 2 and "nope.json: not a kueue-gitops JSON report" in missing.stderr


def test_huge_drift_is_truncated_below_githubs_limit(tmp_path: Path) -> None:
    api = FakeGitHub()
    many = [{**DRIFT, "name": f"cq-{i}", "message": "x" * 200} for i in range(1000)]
    run(api, tmp_path, report("findings", *many))
    body = api.issues_by_number[1].body
    assert len(body) <= 65536 and body.rstrip().endswith("artifacts)_")


def test_pr_comment_is_created_once_then_edited_in_place(tmp_path: Path) -> None:
    api = FakeGitHub()
    api.comment(7, "LGTM")
    body = tmp_path / "plan.md"
    outputs = []
    for text in ("<!-- kueue-gitops-plan -->\nfirst\n", "<!-- kueue-gitops-plan -->\nsecond\n"):
        body.write_text(text)
        result = github(api, "pr-comment", "--pr", "7", "--body", str(body))
        outputs.append((result.exit_code, result.stdout))
    assert outputs == [(0, "pr-comment: created\n"), (0, "pr-comment: updated #2\n")]
    assert [c.body for c in api.comments_by_issue[7]] == [
        "LGTM",
        "<!-- kueue-gitops-plan -->\nsecond\n",
    ]
    body.write_text("no marker\n")
    result = github(api, "pr-comment", "--pr", "7", "--body", str(body))
    assert result.exit_code == 2 and "hidden marker line" in result.stderr
    missing = github(api, "pr-comment", "--pr", "7", "--body", str(tmp_path / "none.md"))
    assert missing.exit_code == 2 and "none.md: cannot read" in missing.stderr


def test_schema_pull_request_is_opened_once(tmp_path: Path) -> None:
    api = FakeGitHub()
    argv = ["ensure-pr", "--branch", "schemas/refresh", "--base", "main", "--title", "Refresh"]
    outputs = [github(api, *argv).stdout for _ in range(2)]
    assert outputs == ["ensure-pr: created #1\n", "ensure-pr: exists #1\n"]
    assert api.pulls == {1: ("schemas/refresh", "main")}


def test_clusters_prints_the_matrix_from_the_repository() -> None:
    result = run_line(["kueue-gitops", "--repo", str(ESTATE), "github", "clusters"])
    assert result.exit_code == 0
    assert json.loads(result.stdout) == sorted(p.name for p in (ESTATE / "clusters").iterdir())


def test_without_a_token_the_real_api_is_a_configuration_error(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report("clean")))
    argv = ["drift-issue", "--cluster", "gpu-prod", "--report", str(path)]
    result = github(None, *argv, env={"GITHUB_TOKEN": None, "GITHUB_REPOSITORY": "o/r"})
    assert result.exit_code == 2
    assert result.stderr == "Error: GITHUB_TOKEN must be set (the workflow provides them)\n"


def test_github_out_of_reach_is_exit_3_with_the_call_that_failed() -> None:
    # Nothing listens on the discard port here: the connection is refused at once.
    env = {"GITHUB_TOKEN": "t", "GITHUB_REPOSITORY": "o/r", "GITHUB_API_URL": "http://127.0.0.1:9"}
    argv = ["ensure-pr", "--branch", "schemas/refresh", "--base", "main", "--title", "Refresh"]
    result = github(None, *argv, env=env)
    assert result.exit_code == 3
    assert result.stderr.startswith("Error: GitHub GET /pulls: <urlopen error")


def test_the_rest_api_is_built_from_the_workflow_environment() -> None:
    api = RestGitHub.from_env({"GITHUB_TOKEN": "t", "GITHUB_REPOSITORY": "o/r"})
    assert (api.base, api.owner) == ("https://api.github.com/repos/o/r", "o")


def test_the_clusters_owners_are_mentioned_when_drift_appears_or_changes(tmp_path: Path) -> None:
    api = FakeGitHub()
    run(api, tmp_path, report("findings", DRIFT))
    assert "Cluster owners (its profile's `owners`): @example-org/platform" in (
        api.issues_by_number[1].body
    )
    run(api, tmp_path, report("findings", {**DRIFT, "live": "32"}))
    [changed] = api.comments_by_issue[1]
    assert changed.body.endswith("@example-org/platform")


def test_accepted_drift_opens_no_issue(tmp_path: Path) -> None:
    accepted = {"reason": "raised for the Q1 launch", "expires": "2999-01-31", "source": "x:3"}
    api = FakeGitHub()
    code, out = run(api, tmp_path, report("clean", {**DRIFT, "suppressed": accepted}))
    assert (code, out, api.writes) == (0, "drift-issue: none\n", [])


def test_each_step_is_a_report_its_outcome_a_section_open_drift_a_warning(tmp_path: Path) -> None:
    api = FakeGitHub()
    code, out = run(api, tmp_path, report("findings", DRIFT), "gpu-prod", "-o", "json")
    doc = json.loads(out)  # run_line holds it to report.schema.json
    assert (code, doc["command"], doc["status"]) == (0, "github drift-issue", "clean")
    assert doc["github"] == {"action": "created", "number": 1}
    [tracked] = doc["findings"]
    assert (tracked["rule"], tracked["severity"], tracked["cluster"]) == (
        "drift-issue-open",
        "warning",
        "gpu-prod",
    )
    assert "issue #1" in tracked["message"]
    annotations = run(api, tmp_path, report("findings", DRIFT), "gpu-prod", "-o", "github")[1]
    assert annotations.startswith("::warning title=drift-issue-open (gpu-prod)::")
    code, out = run(api, tmp_path, report("clean"), "gpu-prod", "-o", "json")
    assert (code, json.loads(out)["findings"]) == (0, [])


def test_an_incomplete_drift_report_is_an_incomplete_step_exit_3(tmp_path: Path) -> None:
    api = FakeGitHub()
    code, out = run(api, tmp_path, report("incomplete"), "gpu-prod", "-o", "json")
    doc = json.loads(out)
    assert (code, doc["status"], doc["github"]["action"]) == (3, "incomplete", "skipped")
    [cluster] = doc["clusters"]
    assert cluster["errors"] == [
        "the drift report is incomplete",
        "LIST ClusterQueues: connection refused",  # the drift report's own
    ]


def _plan_body(clusters: int, rows: int) -> str:
    """A plan comment as the plan's markdown writes it: the verdict, then per cluster a SPLIT
    line and its <details> of `rows` rows."""
    sections = [
        f"{SPLIT}\n<details><summary>Cluster `c{i}`</summary>\n\n"
        + "".join(f"| team-{j}-cq | a100 | `nvidia.com/gpu` | 16 → 8 | -8 |\n" for j in range(rows))
        + "\n</details>\n"
        for i in range(clusters)
    ]
    return "<!-- kueue-gitops-plan -->\n### ❌ kueue-gitops plan: verdict\n\n" + "".join(sections)


def test_a_plan_over_githubs_limit_is_split_at_clusters_into_as_few_comments_as_fit() -> None:
    body = _plan_body(clusters=6, rows=400)  # about 21 KB a cluster
    assert len(body) > 65536
    parts = issues.comment_parts(body)
    assert len(parts) == 3  # two clusters a comment: 126 KB in three
    assert all(len(p) <= 65536 for p in parts)
    assert [p.split("\n", 1)[0] for p in parts] == [
        "<!-- kueue-gitops-plan -->",
        "<!-- kueue-gitops-plan part=2 -->",
        "<!-- kueue-gitops-plan part=3 -->",
    ]
    assert parts[0].startswith("<!-- kueue-gitops-plan -->\n### ❌ kueue-gitops plan: verdict")
    assert "_(continued: part 2 of 3)_" in parts[1]
    for part in parts:  # cut between clusters, never inside one
        assert part.count("<details>") == part.count("</details>") == 2
    joined = "".join(p.split("\n", 1)[1] for p in parts)
    assert all(f"Cluster `c{i}`" in joined for i in range(6))
    assert issues.comment_parts(_plan_body(clusters=2, rows=3)) == [_plan_body(clusters=2, rows=3)]


def test_a_split_comment_is_edited_in_place_part_by_part_and_a_shorter_one_empties_the_rest(
    tmp_path: Path,
) -> None:
    api = FakeGitHub()
    api.comment(7, "LGTM")
    body = tmp_path / "plan.md"
    body.write_text(_plan_body(clusters=6, rows=400))
    first = github(api, "pr-comment", "--pr", "7", "--body", str(body))
    assert (first.exit_code, first.stdout) == (0, "pr-comment: created\n")
    ids = [c.id for c in api.comments_by_issue[7]]
    assert len(ids) == 4  # LGTM and three parts
    body.write_text(_plan_body(clusters=6, rows=399))  # a push: every part edited in place
    api.writes.clear()
    again = github(api, "pr-comment", "--pr", "7", "--body", str(body))
    assert (again.exit_code, again.stdout) == (0, f"pr-comment: updated #{ids[1]}\n")
    assert api.writes == [f"edit comment {i}" for i in ids[1:]]
    assert [c.id for c in api.comments_by_issue[7]] == ids
    body.write_text(_plan_body(clusters=1, rows=3))  # it shrinks: the later parts are emptied
    api.writes.clear()
    github(api, "pr-comment", "--pr", "7", "--body", str(body))
    assert api.writes == [f"edit comment {i}" for i in ids[1:]]
    bodies = [c.body for c in api.comments_by_issue[7]]
    assert bodies[1] == _plan_body(clusters=1, rows=3)
    assert bodies[2].startswith("<!-- kueue-gitops-plan part=2 -->\n_(Not needed any more")
    assert bodies[3].startswith("<!-- kueue-gitops-plan part=3 -->\n_(Not needed any more")
    api.writes.clear()  # the same body again: the emptied parts are left as they are
    github(api, "pr-comment", "--pr", "7", "--body", str(body))
    assert api.writes == [f"edit comment {ids[1]}"]
