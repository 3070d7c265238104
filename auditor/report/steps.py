"""`kueue-gitops github` steps for people: one line, what the step did on GitHub."""

from __future__ import annotations

import typing as t

from auditor.model import Report

if t.TYPE_CHECKING:
    from auditor.github.issues import StepOutcome

STEPS = ("drift-issue", "pr-comment", "ensure-pr")


def text(report: Report, out: t.TextIO) -> None:
    outcome = t.cast("StepOutcome", report.section)
    for c in report.clusters:
        for error in c.errors:
            out.write(f"INCOMPLETE {c.name}: {error}\n")
    number = f" #{outcome.number}" if outcome.number else ""
    out.write(f"{report.command.removeprefix('github ')}: {outcome.action}{number}\n")
