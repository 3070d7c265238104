"""After a crash, every command that writes a report writes an incomplete one (exit 3): and a
reader holding report.schema.json must be able to read it, whichever command crashed."""

from __future__ import annotations

import json
import typing as t

import click
import pytest

from auditor.cli.main import cli
from auditor.cli.options import FORMATS, Context
from auditor.report import contract
from tests.conftest import assert_report

ROOT = click.Context(cli, info_name="kueue-gitops")


def reports(command: click.Command) -> bool:
    """Whether `command` writes a report (its -o takes the report formats)."""
    return any(
        p.name == "output" and isinstance(p.type, click.Choice) and tuple(p.type.choices) == FORMATS
        for p in command.params
    )


def reporting_commands() -> list[tuple[str, click.Context]]:
    """Each command (a group's subcommands too) that writes a report, by the words that run
    it, with the click context it runs in."""
    found: list[tuple[str, click.Context]] = []

    def visit(context: click.Context) -> None:
        command = context.command
        if isinstance(command, click.Group):
            for name in command.list_commands(context):
                sub = command.get_command(context, name)
                if sub is not None:
                    visit(click.Context(sub, parent=context, info_name=name))
        elif reports(command):
            found.append((context.command_path.split(" ", 1)[1], context))

    visit(ROOT)
    return found


COMMANDS = reporting_commands()


def report_name(words: str) -> str:
    return "plan" if words.startswith("plan ") else words  # the verbs report as `plan`


def test_the_commands_found_are_those_the_report_schema_names() -> None:
    named = {report_name(words) for words, _ in COMMANDS}
    assert named == set(contract.schema()["properties"]["command"]["enum"])


@pytest.mark.parametrize(("words", "running"), COMMANDS, ids=[w for w, _ in COMMANDS])
def test_a_crash_report_keeps_the_contract(
    words: str, running: click.Context, capsys: pytest.CaptureFixture[str]
) -> None:
    running.params = {"output": "json", "cluster": "gpu-prod", "base": "main", "head": "HEAD"}
    Context(reporting=running).write_incomplete("internal error: RuntimeError: a bug")
    report: dict[str, t.Any] = json.loads(capsys.readouterr().out)
    assert report["status"] == "incomplete"
    assert report["command"] == report_name(words)
    assert report["clusters"][0]["errors"] == ["internal error: RuntimeError: a bug"]
    assert_report(report)
