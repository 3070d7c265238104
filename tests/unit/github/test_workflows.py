"""The GitHub workflows: valid against GitHub's schemas, pinned, and the commands they run work.

The commands the workflows call are run here as the workflows call them, through the real CLI:
the command lines are read from the workflow files, with the step's environment filled in, and
GitHub faked at our own GitHubApi boundary.
"""

from __future__ import annotations

import fnmatch
import json
import re
import shlex
import typing as t
from importlib import resources
from pathlib import Path

import click
import jsonschema
import pytest
import yaml

from auditor import rules
from auditor.cli.main import cli
from auditor.model import ClusterResult, Finding, Report
from auditor.report import REPORTER_BY_NAME
from tests.conftest import ROOT, run_line
from tests.estate import ESTATE
from tests.unit.conftest import Revisions
from tests.unit.github.fake_github import FakeGitHub, github

WORKFLOWS = sorted((ROOT / ".github/workflows").glob("*.yml"))
ACTIONS = sorted((ROOT / ".github/actions").glob("*/action.yml"))
PINNED = re.compile(r"^\s*(?:-\s+)?uses:\s+[\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d+(\.\d+)*$")
COMMAND = re.compile(r"kueue-gitops((?:[^|>;)\n\\]|\\\n)*)")


def _schema(name: str) -> dict[str, t.Any]:
    vendor = resources.files("check_jsonschema.builtin_schemas.vendor")
    return t.cast(dict[str, t.Any], json.loads(vendor.joinpath(name).read_text()))


def _load(path: Path) -> dict[str, t.Any]:
    doc = yaml.safe_load(path.read_text())
    if True in doc:  # YAML 1.1 reads the key `on` as True; GitHub reads it as "on"
        doc["on"] = doc.pop(True)
    return t.cast(dict[str, t.Any], doc)


def _steps(doc: dict[str, t.Any]) -> list[dict[str, t.Any]]:
    if "runs" in doc:
        return t.cast(list[dict[str, t.Any]], doc["runs"]["steps"])
    return [s for job in doc["jobs"].values() for s in job.get("steps", [])]


def _step(path: Path, name: str) -> dict[str, t.Any]:
    return next(s for s in _steps(_load(path)) if s.get("name") == name)


def commands(run: str, env: t.Mapping[str, str]) -> list[list[str]]:
    """The kueue-gitops command lines of a run script (arguments only), with $VARS expanded."""
    out = []
    for match in COMMAND.finditer(run):
        text = re.sub(r"\$\{?(\w+)\}?", lambda m: env.get(m[1], f"<{m[1]}>"), match[0])
        argv = shlex.split(text.replace("\\\n", " "))
        out.append(argv[1:])
    return out


def test_there_are_the_six_workflows_and_the_setup_action() -> None:
    names = [p.name for p in WORKFLOWS]
    assert names == [
        "code-scanning.yml",
        "drift-report.yml",
        "pull-request.yml",
        "release.yml",
        "schema-refresh.yml",
        "test.yml",
    ]
    assert [p.parent.name for p in ACTIONS] == ["setup"]


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_is_valid_against_githubs_schema(path: Path) -> None:
    jsonschema.validate(_load(path), _schema("github-workflows.json"))


@pytest.mark.parametrize("path", ACTIONS, ids=lambda p: p.parent.name)
def test_action_is_valid_against_githubs_schema(path: Path) -> None:
    jsonschema.validate(_load(path), _schema("github-actions.json"))


def test_schema_validation_catches_a_broken_workflow() -> None:
    doc = _load(ROOT / ".github/workflows/drift-report.yml")
    doc["jobs"]["drift"]["runs-on"] = {"labels": 3}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, _schema("github-workflows.json"))


@pytest.mark.parametrize("path", [*WORKFLOWS, *ACTIONS], ids=lambda p: p.name)
def test_remote_actions_are_pinned_by_sha_and_checkouts_keep_no_credentials(path: Path) -> None:
    for line in path.read_text().splitlines():
        if re.match(r"^\s*(-\s+)?uses:", line) and "uses: ./" not in line:
            assert PINNED.match(line), f"{path.name}: not pinned by SHA with a version: {line}"
    for step in _steps(_load(path)):
        if str(step.get("uses", "")).startswith("actions/checkout@"):
            assert step["with"]["persist-credentials"] is False


@pytest.mark.parametrize("name", ["drift-report.yml", "schema-refresh.yml"])
def test_scheduled_at_an_odd_minute_and_runnable_by_hand(name: str) -> None:
    on = _load(ROOT / ".github/workflows" / name)["on"]
    assert "workflow_dispatch" in on
    for entry in on["schedule"]:
        minute = int(entry["cron"].split()[0])
        assert minute % 2 == 1 and minute not in (0, 30)


def test_drift_matrix_comes_from_the_clusters_step_and_only_incomplete_fails() -> None:
    doc = _load(ROOT / ".github/workflows/drift-report.yml")
    drift = doc["jobs"]["drift"]
    assert (
        drift["strategy"]["matrix"]["cluster"] == "${{ fromJSON(needs.clusters.outputs.clusters) }}"
    )
    assert drift["strategy"]["fail-fast"] is False
    assert drift["permissions"] == {"contents": "read", "issues": "write"}
    [listing] = commands(
        _step(ROOT / ".github/workflows/drift-report.yml", "List the clusters")["run"], {}
    )
    assert listing == ["github", "clusters"]
    result = run_line(["kueue-gitops", "--repo", str(ESTATE), *listing])
    assert (result.exit_code, json.loads(result.stdout)) == (
        0,
        ["gpu-legacy", "gpu-prod", "gpu-staging"],
    )
    compare = _step(
        ROOT / ".github/workflows/drift-report.yml", "Compare the repository with the cluster"
    )
    assert compare["run"].startswith("set +e")  # drift (exit 1) must not fail the job by itself


def test_each_drift_run_restores_the_cache_the_run_before_it_saved(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The drift job keeps the user cache directory (where drift and validate cache each
    parsed file) with actions/cache: a new key each run, the newest earlier one restored."""
    from auditor import cache as auditor_cache

    for name in ("KUEUE_GITOPS_CACHE", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    steps = _load(ROOT / ".github/workflows/drift-report.yml")["jobs"]["drift"]["steps"]
    [at] = [i for i, s in enumerate(steps) if str(s.get("uses", "")).startswith("actions/cache@")]
    compare = next(i for i, s in enumerate(steps) if "kueue-gitops drift" in s.get("run", ""))
    assert at < compare
    cache = steps[at]["with"]
    assert Path(cache["path"].replace("~", str(Path.home()), 1)) == auditor_cache.root()
    assert "${{ github.run_id }}" in cache["key"] and "${{ matrix.cluster }}" in cache["key"]
    assert cache["key"].startswith(cache["restore-keys"]) and "run_id" not in cache["restore-keys"]


def _parses(argv: list[str]) -> None:
    """Parse a kueue-gitops command line with the real CLI, without running it."""
    command: click.Command = cli
    rest = list(argv)
    while isinstance(command, click.Group):
        name = rest.pop(0)
        sub = command.get_command(click.Context(command), name)
        assert sub is not None, f"kueue-gitops has no command {name!r} ({argv})"
        command = sub
    command.make_context(command.name or "", rest)


@pytest.mark.parametrize(
    "path",
    [p for p in WORKFLOWS if p.name not in ("test.yml", "release.yml")],
    ids=lambda p: p.name,
)
def test_every_command_a_workflow_runs_exists_with_those_options(path: Path) -> None:
    seen = 0
    for step in _steps(_load(path)):
        env = {k: "1" for k in step.get("env", {})} | {"live": "", "RUNNER_TEMP": "/tmp"}
        for argv in commands(step.get("run", ""), env):
            seen += 1
            _parses(argv)
    assert seen


def test_pull_request_steps_plan_then_comment_as_the_workflow_does(
    repo_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = ROOT / ".github/workflows/pull-request.yml"
    revs = Revisions(repo_copy)
    base = revs.commit("base")
    revs.edit("clusters/gpu-prod/clusterqueues.yaml", 'nominalQuota: "16"', 'nominalQuota: "20"')
    revs.commit("more gpus")
    monkeypatch.chdir(repo_copy)
    [plan_line] = commands(
        _step(path, "Plan against the base")["run"], {"BASE_SHA": base, "live": ""}
    )
    result = run_line(["kueue-gitops", *plan_line])
    assert result.exit_code == 0
    (repo_copy / "plan.md").write_text(result.output)
    api = FakeGitHub()
    [comment_line] = commands(
        _step(path, "Comment the plan on the pull request")["run"], {"PR_NUMBER": "12"}
    )
    for _ in range(2):  # a second push edits the same comment
        assert github(api, *comment_line[1:]).exit_code == 0
    [comment] = api.comments_by_issue[12]
    assert comment.body.startswith("<!-- kueue-gitops-plan -->\n### ✅ kueue-gitops plan: 1 change")
    assert "| 16 → 20 | +4 |" in comment.body
    [page_line] = commands(_step(path, "Draw the plan as a page (HTML)")["run"], {"BASE_SHA": base})
    assert page_line[-2:] == ["-o", "html"]
    page = run_line(["kueue-gitops", *page_line])
    assert page.exit_code == 0 and page.output.startswith("<!DOCTYPE html>")
    assert 'id="quota"' in page.output  # the quota cell's chart
    kept = _step(path, "Keep the HTML reports")
    assert kept["with"]["path"] == "reports/" and kept["if"] == "always()"
    revs.repo.close()


def test_drift_issue_step_runs_as_the_workflow_calls_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    step = _step(ROOT / ".github/workflows/drift-report.yml", "Update the cluster's drift issue")
    env = {"CLUSTER": "gpu-prod", "RUN_URL": "https://github.com/o/r/actions/runs/1"}
    [argv] = commands(step["run"], env)
    monkeypatch.chdir(tmp_path)
    api = FakeGitHub()
    finding = Finding(rules.get("drift-quota"), "differs", cluster="gpu-prod", change="modified")
    down = ClusterResult("gpu-prod", "incomplete", ["connection refused"])
    for report, code, state in (
        (Report("drift", [finding], [ClusterResult("gpu-prod")]), 0, "open"),
        (Report("drift", [], [down]), 3, "open"),
        (Report("drift", [], [ClusterResult("gpu-prod")]), 0, "closed"),
    ):
        with (tmp_path / "drift.json").open("w") as out:  # as `drift -o json > drift.json`
            REPORTER_BY_NAME["json"](report, out)
        assert github(api, *argv[1:]).exit_code == code
        assert api.issues_by_number[1].state == state
    assert "cluster:gpu-prod" in api.issues_by_number[1].labels


@pytest.mark.parametrize("argv", [["plan", "--bogus"], ["nosuch"], ["schemas", "fetch", "--x"]])
def test_the_command_check_rejects_what_the_cli_does_not_have(argv: list[str]) -> None:
    with pytest.raises((AssertionError, click.UsageError)):
        _parses(argv)


# -- code scanning, the project's own tests, Dependabot, the schema pull request ---------------


def test_code_scanning_runs_on_main_and_never_uploads_from_a_fork() -> None:
    doc = _load(ROOT / ".github/workflows/code-scanning.yml")
    assert doc["on"]["push"] == {"branches": ["main"]} and "pull_request" in doc["on"]
    job = doc["jobs"]["validate"]
    assert job["permissions"] == {"contents": "read", "security-events": "write"}
    steps = {s["name"]: s for s in job["steps"] if "name" in s}
    upload = steps["Upload to code scanning"]
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    fork = "github.event.pull_request.head.repo.full_name"
    assert f"{fork} == github.repository" in upload["if"]
    assert "github.event_name != 'pull_request'" in upload["if"]
    assert f"{fork} != github.repository" in steps["Keep the SARIF file (forks)"]["if"]
    [argv] = commands(steps["Validate (SARIF)"]["run"], {})
    assert argv == ["validate", "-o", "sarif"]
    assert steps["Validate (SARIF)"]["run"].rstrip().endswith('[ "$code" != 2 ]')


def test_the_pr_plan_reads_each_cluster_through_its_profile_context() -> None:
    run = _step(ROOT / ".github/workflows/pull-request.yml", "Plan against the base")["run"]
    assert 'export KUBECONFIG="$RUNNER_TEMP/kubeconfig"' in run
    assert "--context" not in run and "--kubeconfig" not in run


def test_the_test_workflow_runs_make_test_with_the_go_build_cached(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from auditor.sandbox.build import cache_root

    for name in ("KUEUE_GITOPS_CACHE", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    job = _load(ROOT / ".github/workflows/test.yml")["jobs"]["make-test"]
    steps = job["steps"]
    assert [s["run"] for s in steps if "run" in s] == ["make test"]
    [kept] = [s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact@")]
    assert kept["if"] == "always()" and kept["with"]["path"] == "test-artifacts/html-reports/"
    [go] = [s for s in steps if str(s.get("uses", "")).startswith("actions/setup-go@")]
    assert go["with"]["cache-dependency-path"] == "testenv/**/go.sum"
    [cache] = [s for s in steps if str(s.get("uses", "")).startswith("actions/cache@")]
    assert cache["with"]["path"] == "~/.cache/kueue-gitops"
    assert cache_root() == Path.home() / ".cache/kueue-gitops"  # where the binaries are built
    assert "testenv/**/go.sum" in cache["with"]["key"]


def test_dependabot_covers_actions_every_go_module_and_pip() -> None:
    doc = yaml.safe_load((ROOT / ".github/dependabot.yml").read_text())
    jsonschema.validate(doc, _schema("dependabot.json"))
    updates = {u["package-ecosystem"]: u for u in doc["updates"]}
    assert set(updates) == {"github-actions", "gomod", "pip"}
    patterns = updates["gomod"]["directories"]
    for mod in (ROOT / "testenv").rglob("go.mod"):
        folder = "/" + str(mod.parent.relative_to(ROOT))
        assert any(fnmatch.fnmatch(folder, p) for p in patterns), folder


def test_schema_refresh_opens_its_pull_request_with_the_app_token_when_set() -> None:
    path = ROOT / ".github/workflows/schema-refresh.yml"
    token = _step(path, "App token")
    assert token["uses"].startswith("actions/create-github-app-token@")
    assert token["if"] == "vars.SCHEMA_REFRESH_APP_ID != ''"
    opened = _step(path, "Open a pull request when they changed")
    assert opened["env"]["GITHUB_TOKEN"] == "${{ steps.app.outputs.token || github.token }}"


def test_the_workflows_a_platform_team_gets_are_these() -> None:
    """`init` writes this repository's workflows (one source: the package's templates); only
    the setup action differs, installing the pinned release instead of this checkout."""
    from auditor.onboard import start

    written = start.adopter_files("1.2.3")
    workflows = {p for p in written if p.startswith(".github/workflows/")}
    ours = ("test.yml", "release.yml")  # this project's own CI and releases
    assert workflows == {f".github/workflows/{p.name}" for p in WORKFLOWS if p.name not in ours}
    for path in workflows:
        assert written[path] == (ROOT / path).read_text(), f"{path} differs from its template"
    assert (
        written[".github/actions/setup/action.yml"]
        != (ROOT / ".github/actions/setup/action.yml").read_text()
    )


def test_the_adopters_setup_installs_the_pinned_release_and_needs_nothing_of_this_checkout(
    tmp_path: Path,
) -> None:
    from auditor.onboard import start

    for path, text in start.adopter_files("1.2.3").items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
        for needed in ("make ", "testenv", "pip install -e", "pyproject.toml", "auditor/"):
            assert needed not in text, (path, needed)
    action = tmp_path / ".github/actions/setup/action.yml"
    jsonschema.validate(_load(action), _schema("github-actions.json"))
    test_remote_actions_are_pinned_by_sha_and_checkouts_keep_no_credentials(action)
    [install] = [s for s in _steps(_load(action)) if "pip install" in s.get("run", "")]
    assert install["run"].endswith('"kueue-gitops$EXTRA==1.2.3"')
    hooks = yaml.safe_load((tmp_path / ".pre-commit-config.yaml").read_text())
    [repo] = hooks["repos"]
    assert repo["rev"] == "v1.2.3"
    offered = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert [h["id"] for h in repo["hooks"]] == [h["id"] for h in offered]


def test_a_release_is_a_version_tag_checked_before_anything_is_published() -> None:
    doc = _load(ROOT / ".github/workflows/release.yml")
    assert doc["on"] == {"push": {"tags": ["v[0-9]+.[0-9]+.[0-9]+"]}}
    job = doc["jobs"]["release"]
    assert job["needs"] == "sim"  # the simulator's wheels, built and tried on each platform first
    names = [s.get("name", s.get("uses", "")) for s in job["steps"]]
    check = names.index("Check them")
    assert check < names.index("Publish to PyPI") and check < names.index(
        "Publish the GitHub release"
    )
    assert names.index("Try the wheel as a user installs it") < names.index("Publish to PyPI")
    assert (
        'scripts/release_check.py "$TAG" dist'
        in _step(ROOT / ".github/workflows/release.yml", "Check them")["run"]
    )
    assert (ROOT / "scripts/release_check.py").is_file()
