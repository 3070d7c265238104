"""What the `plan` verbs share: their options, declared once, and how each ends (one report)."""

from __future__ import annotations

import typing as t
from pathlib import Path

import click

from auditor.cli.options import F, finish
from auditor.model import ClusterResult, Finding, Report, Section


class Verb(click.Command):
    """A `plan` verb: its report is a `plan` report (report.schema.json), whichever verb wrote
    it, also the incomplete one written after a crash (options.Context.write_incomplete)."""

    report_name = "plan"


def base(func: F) -> F:
    return click.option(
        "--base", required=True, metavar="REV", help="The revision the change starts from."
    )(func)


def head(help: str = "The change.") -> t.Callable[[F], F]:
    return click.option("--head", default="HEAD", show_default=True, metavar="REV", help=help)


def clusters(func: F) -> F:
    return click.option(
        "--cluster", "clusters", multiple=True, metavar="C", help="Only these clusters."
    )(func)


def _one(_ctx: click.Context, _param: click.Parameter, value: tuple[str, ...]) -> str | None:
    if len(value) > 1:
        raise click.BadParameter(f"{', '.join(value)}: this verb reads one cluster; name one")
    return value[0] if value else None


def cluster(help: str, *, required: bool = False) -> t.Callable[[F], F]:
    """--cluster C, once: given twice it is refused, not the last one silently taken."""
    return click.option(
        "--cluster",
        "cluster",
        multiple=True,
        required=required,
        callback=_one,
        metavar="C",
        help=help,
    )


def live(help: str) -> t.Callable[[F], F]:
    return click.option("--live/--offline", default=False, show_default=True, help=help)


def run_for(help: str) -> t.Callable[[F], F]:
    return click.option(
        "--run-for",
        "run_for",
        default=3600.0,
        show_default=True,
        type=click.FloatRange(min=0, min_open=True),
        metavar="SECONDS",
        help=help,
    )


def path_argument(name: str, metavar: str) -> t.Callable[[F], F]:
    """A file the verb reads (a trace, a grid, a Job); a missing one is the reader's clear
    error, naming it, rather than click's."""
    return click.argument(name, metavar=metavar, type=click.Path(dir_okay=False, path_type=Path))


class Answer(Section, t.Protocol):
    """What a simulated verb answers: a report section with findings of its own."""

    def findings(self) -> list[Finding]: ...


def report(cluster: str, answer: Answer, output: str) -> t.NoReturn:
    """Write `answer` for `cluster` as the `plan` report and exit with its status."""
    finish(Report("plan", answer.findings(), [ClusterResult(cluster)], section=answer), output)
