"""Reporters only format a Report; they never decide severity or exit codes.

Every command that reports writes through REPORTER_BY_NAME, the choices of the shared `-o`
(auditor/cli/options.py). Text and markdown show a report that carries a section (a plan's
changes, verify's checks, ...) through the command's view (auditor/report/views.py); JSON adds
the section's keys; SARIF, JUnit and GitHub annotations carry the findings; HTML draws the JSON
report's data as charts with their numbers beside them. Add a format by adding a module and one
entry below.
"""

from __future__ import annotations

import importlib
import typing as t

from auditor.model import Report

Reporter = t.Callable[[Report, t.TextIO], None]


def _format(module: str, viewed: str | None = None) -> Reporter:
    """The writer of auditor.report.`module`, imported when a report is written in its format
    (a command pays for its own format only: the views of plan, status and the ledger, JUnit's
    XML and pygal's charts are a tenth of a second of imports); with `viewed`, the command's
    view of that name in auditor/report/views.py writes a report that carries a section."""

    def write(report: Report, stream: t.TextIO) -> None:
        if viewed is not None and report.section is not None:
            from auditor.report import views

            view = getattr(views, viewed).get(report.command)
            if view is not None:
                view(report, stream)
                return
        importlib.import_module(f"auditor.report.{module}").write(report, stream)

    return write


REPORTER_BY_NAME: dict[str, Reporter] = {
    "text": _format("text", viewed="TEXT"),
    "json": _format("json_"),
    "markdown": _format("markdown", viewed="MARKDOWN"),
    "sarif": _format("sarif"),
    "junit": _format("junit"),
    "github": _format("github"),
    "html": _format("html"),  # one self-contained page with charts (docs/html-report.md)
}

__all__ = ["REPORTER_BY_NAME", "Reporter"]
