"""`plan` as verbs: `plan --help` lists them one line each, each verb refuses another's options
as a usage error, and the old one-command spellings still run, as the verb they meant, with one
hint line on stderr that leaves the report on stdout as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from auditor.cli.plan import legacy
from tests.conftest import run_line
from tests.unit.conftest import Revisions

VERBS = ["diff", "replay", "job", "sweep"]
HINT = "the old spelling goes in the next release"


def test_plan_help_lists_the_verbs_one_line_each() -> None:
    result = run_line(["kueue-gitops", "plan", "--help"])
    assert result.exit_code == 0
    listed = result.stdout.split("Commands:\n", 1)[1].splitlines()
    lines = [line.split() for line in listed if line.strip()]
    assert [words[0] for words in lines] == VERBS
    for words in lines:  # a whole sentence: not cut short with "..."
        assert words[-1].endswith(".") and not words[-1].endswith("..."), words


# An option of one verb given to another, with what that verb needs otherwise present.
FOREIGN = [
    (["diff", "--base", "HEAD"], "--engine", "sim"),
    (["diff", "--base", "HEAD"], "--timeline", "day.csv"),
    (["diff", "--base", "HEAD"], "--on", "ray"),
    (["diff", "--base", "HEAD"], "--run-for", "60"),
    (["replay", "t.json", "--base", "HEAD"], "--on", "ray"),
    (["replay", "t.json", "--base", "HEAD"], "--trace", "t.json"),
    (["job", "j.yaml", "--cluster", "gpu-prod"], "--base", "HEAD"),
    (["job", "j.yaml", "--cluster", "gpu-prod"], "--speed", "20"),
    (["job", "j.yaml", "--cluster", "gpu-prod"], "--live", None),
    (["sweep", "g.yaml", "--trace", "t.json"], "--base", "HEAD"),
    (["sweep", "g.yaml", "--trace", "t.json"], "--engine", "kueue"),
    (["sweep", "g.yaml", "--trace", "t.json"], "--timeline", "day.csv"),
]


@pytest.mark.parametrize(("line", "option", "value"), FOREIGN)
def test_each_verb_refuses_another_verbs_option_as_a_usage_error(
    tmp_path: Path, line: list[str], option: str, value: str | None
) -> None:
    given = [option] if value is None else [option, value]
    result = run_line(["kueue-gitops", "--repo", str(tmp_path), "plan", *line, *given])
    assert result.exit_code == 2
    assert f"No such option '{option}'" in result.stderr
    assert f" plan {line[0]} [OPTIONS]" in result.stderr  # the verb's usage line
    assert result.stdout == ""


def test_the_old_diff_spelling_writes_the_same_report_and_one_hint(revs: Revisions) -> None:
    revs.edit("clusters/gpu-prod/clusterqueues.yaml", 'nominalQuota: "16"', 'nominalQuota: "8"')
    head = revs.commit("cut")
    old = ["--base", "base", "--head", head, "-o", "json"]
    before = run_line(["kueue-gitops", "--repo", str(revs.root), "plan", *old])
    now = run_line(["kueue-gitops", "--repo", str(revs.root), "plan", "diff", *old])
    assert before.exit_code == now.exit_code == 0
    assert before.stdout == now.stdout and json.loads(before.stdout)["changes"]
    assert before.stderr == (
        f"hint: `plan --base base --head {head} -o json` is now "
        f"`plan diff --base base --head {head} -o json`; {HINT}\n"
    )
    assert now.stderr == ""


# Old lines of each mode, the new line each is, and the note a missing file gives (the verb ran).
OLD = [
    (
        ["--base", "HEAD", "--replay", "t.json", "--speed", "20"],
        ["replay", "t.json", "--base", "HEAD", "--speed", "20"],
        "cannot read the trace",
    ),
    (
        ["--live", "--cluster", "gpu-prod", "--job", "j.yaml", "--run-for", "60"],
        ["job", "j.yaml", "--cluster", "gpu-prod", "--run-for", "60"],
        "j.yaml",
    ),
    (
        ["--sweep", "g.yaml", "--replay", "t.json", "--cluster", "gpu-prod"],
        ["sweep", "g.yaml", "--trace", "t.json", "--cluster", "gpu-prod"],
        "g.yaml",
    ),
    (
        ["--live", "--base", "HEAD", "--cluster", "gpu-prod", "--replay", "t.json"],
        ["replay", "t.json", "--base", "HEAD", "--cluster", "gpu-prod", "--live"],
        "cannot read the trace",
    ),
]


@pytest.mark.parametrize(("old", "new", "says"), OLD, ids=["replay", "job", "sweep", "live"])
def test_each_old_spelling_runs_its_verb_with_one_hint(
    tmp_path: Path, old: list[str], new: list[str], says: str
) -> None:
    files = {"t.json", "j.yaml", "g.yaml"}
    at = [str(tmp_path / w) if w in files else w for w in old]
    verb = [str(tmp_path / w) if w in files else w for w in new]
    before = run_line(["kueue-gitops", "--repo", str(tmp_path), "plan", *at])
    now = run_line(["kueue-gitops", "--repo", str(tmp_path), "plan", *verb])
    hint, rest = before.stderr.split("\n", 1)
    assert hint.startswith("hint: `plan --") and hint.endswith(HINT)
    assert f"is now `plan {' '.join(verb)}`" in hint
    assert (before.exit_code, rest, before.stdout) == (now.exit_code, now.stderr, now.stdout)
    assert now.exit_code == 2 and says in now.stderr


def test_group_options_before_an_old_spelling_stay_where_they_are() -> None:
    line = ["--repo", "r", "-q", "--base", "A", "--live", "--context", "c"]
    new, hint = legacy.translate(line) or ([], "")
    assert new == ["--repo", "r", "-q", "diff", "--base", "A", "--context", "c", "--live"]
    assert hint.startswith("hint: `plan --base A --live --context c` is now `plan diff --base A")
    assert legacy.translate(["--repo", "r", "diff", "--base", "A"]) is None  # the new spelling
    assert legacy.translate(["--help"]) is None and legacy.translate([]) is None
