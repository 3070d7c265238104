"""One report path: every command that reports takes the one shared `-o`, whose formats are the
reporter registry's, so a reporter added there is a format of every command at once."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from auditor.cli import examples
from auditor.cli.main import cli
from auditor.report import REPORTER_BY_NAME, contract
from auditor.rules.render import CATALOGUE_FORMATS
from tests.conftest import run_line

# the commands that report: the JSON report's `command` enum, their one list
REPORTING = set(contract.schema()["properties"]["command"]["enum"])


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
    # a plan verb writes the report of `plan`
    assert {"plan" if path.startswith("plan ") else path for path in offered} == REPORTING
    registry = ("auto", *REPORTER_BY_NAME)  # auto: annotations under GitHub Actions, else text
    assert {path: f for path, f in offered.items() if f != registry} == {}


def test_o_is_a_format_wherever_it_is_offered() -> None:
    """A file or folder has its own option; an -o that is no format is the old spelling, hidden
    and refused."""
    for path, command in examples.walk(cli):
        for param in command.params:
            if "-o" in getattr(param, "opts", ()) and not isinstance(param.type, click.Choice):
                assert getattr(param, "hidden", False), path


@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        (["trace", "generate", "--cluster", "gpu-staging", "-o", "t.json"], "--out t.json"),
        (["trace", "generate", "--cluster", "gpu-staging", "-o", "json"], "give --out PATH"),
        (["trace", "record", "--cluster", "gpu-prod", "--output", "t.json"], "--out t.json"),
        (["export-workloads", "--cluster", "gpu-prod", "-o", "snap/"], "--out-dir snap/"),
        (["export-workloads", "--cluster", "gpu-prod", "--output-dir", "snap/"], "--out-dir snap/"),
    ],
)
def test_the_old_o_of_a_file_or_folder_is_refused_naming_the_new_option(
    argv: list[str], hint: str, tmp_path: Path
) -> None:
    result = run_line(["kueue-gitops", *argv])
    assert result.exit_code == 2, result.output
    assert hint in result.stderr
    assert not (tmp_path / "t.json").exists() and not Path("json").exists()
