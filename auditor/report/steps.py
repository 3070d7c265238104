"""`kueue-gitops github` steps for people: one line, what the step did on GitHub."""

from __future__ import annotations

import typing as t

from auditor.model import Report

STEPS = ("drift-issue", "pr-comment", "ensure-pr")


class Outcome(t.Protocol):
    """What a step did, as its section says (auditor/github's StepOutcome is one: a reporter
    reads the section's shape, never the layer above it)."""

    action: str
    number: int | None


def text(report: Report, out: t.TextIO) -> None:
    outcome = t.cast(Outcome, report.section)
    for c in report.clusters:
        for error in c.errors:
            out.write(f"INCOMPLETE {c.name}: {error}\n")
    number = f" #{outcome.number}" if outcome.number else ""
    out.write(f"{report.command.removeprefix('github ')}: {outcome.action}{number}\n")
