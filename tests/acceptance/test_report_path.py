"""One report path: every command that reports takes the one shared `-o`, whose formats are the
reporter registry's, so a reporter added there is a format of every command at once."""

from __future__ import annotations

import click

from auditor.cli import examples
from auditor.cli.main import cli
from auditor.report import REPORTER_BY_NAME
from auditor.rules.render import CATALOGUE_FORMATS

REPORTING = {
    "validate", "drift", "plan", "codeowners", "verify", "upgrade-check", "preemptions",
    "status", "hold", "resume", "github drift-issue", "github pr-comment", "github ensure-pr",
}  # fmt: skip


def formats() -> dict[str, tuple[str, ...]]:
    """Each command whose -o/--output picks a format, with the formats it offers."""
    out = {}
    for path, command in examples.walk(cli):
        for param in command.params:
            if "-o" in getattr(param, "opts", ()) and isinstance(param.type, click.Choice):
                out[path] = tuple(param.type.choices)
    return out


def test_every_command_that_reports_offers_the_registrys_formats() -> None:
    offered = formats()
    assert offered.pop("rules") == tuple(CATALOGUE_FORMATS)  # the catalogue is not a report
    assert set(offered) == REPORTING
    registry = ("auto", *REPORTER_BY_NAME)  # auto: annotations under GitHub Actions, else text
    assert {path: f for path, f in offered.items() if f != registry} == {}
