"""How text and markdown show a command's report when it carries more than findings.

Every command that reports goes through the reporter registry (auditor/report/__init__.py);
JSON writes the section's keys beside the findings, SARIF, JUnit and GitHub annotations the
findings alone, and text and markdown show the section through the command's view below (the
findings' generic listing where a command has none). Views format; they decide nothing.
"""

from __future__ import annotations

import typing as t

from auditor.model import Report
from auditor.report import (
    forecast,
    ledger,
    plan,
    replay,
    runbook,
    steps,
    sweep,
    text,
    upgrade,
    verify,
)

if t.TYPE_CHECKING:
    from auditor.drift.fleet import Fleet
    from auditor.kueue.ledger import Ledger
    from auditor.plan.model import Plan
    from auditor.replay.comparison import Comparison
    from auditor.replay.livestart import Forecast
    from auditor.replay.sweep import Sweep
    from auditor.status import Snapshot

View = t.Callable[[Report, t.TextIO], None]


def _replayed(report: Report) -> bool:
    """`plan --replay`'s section is a replay comparison (it says so), not a Plan."""
    return getattr(report.section, "section_kind", None) == "replay"


def _swept(report: Report) -> bool:
    """`plan --sweep`'s section is a sweep over a grid (it says so)."""
    return getattr(report.section, "section_kind", None) == "sweep"


def _plan_text(report: Report, stream: t.TextIO) -> None:
    if getattr(report.section, "section_kind", None) == "job":  # plan --job: a forecast
        forecast.text(t.cast("Forecast", report.section), stream)
    elif _swept(report):
        sweep.text(t.cast("Sweep", report.section), stream)
    elif _replayed(report):
        replay.text(t.cast("Comparison", report.section), stream)
    else:
        plan.text(t.cast("Plan", report.section), stream)


def _plan_markdown(report: Report, stream: t.TextIO) -> None:
    if _swept(report):
        sweep.markdown(t.cast("Sweep", report.section), stream)
    elif _replayed(report):
        replay.markdown(t.cast("Comparison", report.section), stream)
    else:
        plan.markdown(t.cast("Plan", report.section), stream)


def _ledger_text(report: Report, stream: t.TextIO) -> None:
    ledger.write_text(t.cast("Ledger", report.section), report, stream)


def _ledger_markdown(report: Report, stream: t.TextIO) -> None:
    ledger.write_markdown(t.cast("Ledger", report.section), report, stream)


def _status_text(report: Report, stream: t.TextIO) -> None:
    stream.write(t.cast("Snapshot", report.section).text() + "\n")


def _drift_text(report: Report, stream: t.TextIO) -> None:
    stream.write(t.cast("Fleet", report.section).text())
    text.write(report, stream)


TEXT: dict[str, View] = {
    "drift": _drift_text,
    "plan": _plan_text,
    "verify": verify.text,
    "upgrade-check": upgrade.text,
    "preemptions": _ledger_text,
    "status": _status_text,
    "hold": runbook.text,
    "resume": runbook.text,
    **{f"github {step}": steps.text for step in steps.STEPS},
}
MARKDOWN: dict[str, View] = {
    "plan": _plan_markdown,
    "preemptions": _ledger_markdown,
}
