"""The CLI as a newcomer meets it: examples in every --help that really parse, a suggestion for
a mistyped command, --repo anywhere on the line or from KUEUE_GITOPS_REPO, and shell completion
of the repository's cluster names."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from auditor.cli import examples
from auditor.cli.main import cli
from tests.conftest import run_line
from tests.estate import ESTATE

COMMANDS = dict(examples.walk(cli))
KUEUE_GITOPS = re.compile(r"kueue-gitops((?:[^|>;)\n\"]|\"[^\"]*\")*)")


def parses(argv: list[str]) -> None:
    """Parse a kueue-gitops command line with the real CLI, without running it."""
    command: click.Command = cli
    rest = list(argv)
    parent = cli.make_context("kueue-gitops", [], resilient_parsing=True)
    while isinstance(command, click.Group):
        name = rest.pop(0)
        sub = command.get_command(parent, name)
        assert sub is not None, f"no command {name!r} in {argv}"
        command = sub
    command.make_context(command.name or "", rest, parent=parent)


def test_every_command_is_reached() -> None:
    assert {
        "validate",
        "drift",
        "plan diff",
        "tenant add",
        "cluster add",
        "github drift-issue",
    } <= set(COMMANDS)


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_every_commands_help_has_examples_that_parse(path: str) -> None:
    result = run_line(["kueue-gitops", *path.split(), "--help"])
    assert result.exit_code == 0
    assert "Examples:" in result.output, f"`kueue-gitops {path} --help` shows no example"
    lines = examples.command_lines(path)
    assert lines
    for line in lines:
        assert f"    {line}\n" in result.output  # shown whole, unwrapped
        [found] = KUEUE_GITOPS.findall(line)
        argv = shlex.split(found)
        assert argv[: len(path.split())] == path.split(), line
        parses(argv)


def test_a_mistyped_command_gets_a_suggestion() -> None:
    result = run_line(["kueue-gitops", "valdate"])
    assert result.exit_code == 2
    assert "No such command 'valdate'. Did you mean 'validate'?" in result.stderr
    assert "Did you mean" not in run_line(["kueue-gitops", "zzzzzz"]).stderr


def test_repo_before_or_after_the_command_or_from_the_environment(tmp_path: Path) -> None:
    before = run_line(["kueue-gitops", "--repo", str(ESTATE), "github", "clusters"])
    after = run_line(["kueue-gitops", "github", "clusters", "--repo", str(ESTATE)])
    env = CliRunner().invoke(cli, ["github", "clusters"], env={"KUEUE_GITOPS_REPO": str(ESTATE)})
    assert before.exit_code == after.exit_code == env.exit_code == 0
    assert before.stdout == after.stdout == env.stdout
    nowhere = run_line(["kueue-gitops", "github", "clusters", "--repo", str(tmp_path)])
    assert nowhere.exit_code == 2 and "no kueue-gitops repository" in nowhere.stderr


def complete(words: str) -> list[str]:
    env = {
        "_KUEUE_GITOPS_COMPLETE": "bash_complete",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1)),
    }
    result = CliRunner().invoke(cli, [], env=env, prog_name="kueue-gitops")
    return [line.split(",", 1)[1] for line in result.output.splitlines()]


def test_completion_offers_commands_and_the_repositorys_cluster_names() -> None:
    assert "validate" in complete("kueue-gitops val")
    names = complete(f"kueue-gitops --repo {ESTATE} drift --cluster gpu-")
    assert {"gpu-prod", "gpu-staging"} <= set(names)
    assert all(n.startswith("gpu-") for n in names)
    assert complete(f"kueue-gitops --repo {ESTATE} status --cluster gpu-st") == ["gpu-staging"]


def test_completion_after_like_explain_and_hold() -> None:
    assert complete(f"kueue-gitops --repo {ESTATE} cluster add gpu-dev --like gpu-st") == [
        "gpu-staging"
    ]
    assert complete("kueue-gitops explain capacity-ex") == ["capacity-exceeded"]
    queues = complete(f"kueue-gitops --repo {ESTATE} hold team-")
    assert "team-a-cq" in queues and all(q.startswith("team-") for q in queues)
    on_prod = complete(f"kueue-gitops --repo {ESTATE} resume --cluster gpu-prod team-a")
    assert on_prod == ["team-a-cq"]
