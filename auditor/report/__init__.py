"""Reporters only format a Report; they never decide severity or exit codes.

Every command that reports writes through REPORTER_BY_NAME, the choices of the shared `-o`
(auditor/cli/options.py). Text and markdown show a report that carries a section (a plan's
changes, verify's checks, ...) through the command's view (auditor/report/views.py); JSON adds
the section's keys; SARIF, JUnit and GitHub annotations carry the findings; HTML draws the JSON
report's data as charts with their numbers beside them. Add a format by adding a module and one
entry below.
"""

from __future__ import annotations

import typing as t

from auditor.model import Report
from auditor.report import github, json_, junit, markdown, sarif, text, views

Reporter = t.Callable[[Report, t.TextIO], None]


def _html(report: Report, stream: t.TextIO) -> None:
    from auditor.report import html  # draws with pygal: imported only when a page is asked for

    html.write(report, stream)


REPORTER_BY_NAME: dict[str, Reporter] = {
    "text": views.viewed(text.write, views.TEXT),
    "json": json_.write,
    "markdown": views.viewed(markdown.write, views.MARKDOWN),
    "sarif": sarif.write,
    "junit": junit.write,
    "github": github.write,
    "html": _html,  # one self-contained page with charts (docs/html-report.md)
}

__all__ = ["REPORTER_BY_NAME", "Reporter"]
