"""The preemption ledger as markdown and text (its JSON keys are Ledger.to_json's; its metrics
for the eviction-rate SLO are auditor/report/metrics.py's)."""

from __future__ import annotations

import typing as t

from auditor.kueue.ledger import Eviction, Ledger, stamp
from auditor.model import Report


def _recovery(e: Eviction) -> str:
    r = e.recovery
    if r is None:
        return "unknown"
    state = (
        "completed"
        if r.completed
        else "re-admitted"
        if r.readmitted
        else f"NOT re-admitted ({r.state})"
    )
    return f"{state}; checkpoint {r.checkpoint or 'none recorded'}"


def _preemptor(e: Eviction) -> str:
    if e.kind != "preemption":
        return "-"
    who = e.preemptor or (f"UID {e.preemptor_uid} (gone)" if e.preemptor_uid else "unknown")
    return who + (f" (priority {e.preemptor_priority})" if e.preemptor_priority is not None else "")


def write_markdown(ledger: Ledger, report: Report, out: t.TextIO) -> None:
    out.write(
        f"## Preemption ledger: {ledger.cluster}, {stamp(ledger.since)} to "
        f"{stamp(ledger.until)}\n\n"
    )
    for c in report.clusters:
        for error in c.errors:
            out.write(f"> **Incomplete:** {error}\n\n")
    if not ledger.entries:
        out.write("No eviction in this window.\n")
        return
    out.write(
        "| Time | Victim | ClusterQueue | Priority | Reason | Preemptor | Recovery |\n"
        "|---|---|---|---|---|---|---|\n"
    )
    for e in ledger.entries:
        out.write(
            f"| {e.at.isoformat().replace('+00:00', 'Z')} | `{e.victim}`"
            + (f" (Job `{e.job}`)" if e.job else "")
            + f" | {e.cluster_queue or '-'} | {e.priority if e.priority is not None else '-'}"
            f" | {e.reason} | {_preemptor(e)} | {_recovery(e)} |\n"
        )
    out.write(f"\n{_summary(ledger)}\n")


def write_text(ledger: Ledger, report: Report, out: t.TextIO) -> None:
    for e in ledger.entries:
        out.write(
            f"{e.at.isoformat().replace('+00:00', 'Z')} {e.kind} {e.reason}: {e.victim} "
            f"[{e.cluster_queue or '-'}] priority {e.priority}; by {_preemptor(e)}; "
            f"{_recovery(e)}\n"
        )
    for c in report.clusters:
        for error in c.errors:
            out.write(f"INCOMPLETE {c.name}: {error}\n")
    out.write(f"preemptions: {_summary(ledger)}\n")


def _summary(ledger: Ledger) -> str:
    kinds = [e.kind for e in ledger.entries]
    return (
        f"{kinds.count('preemption')} preemption(s) and {kinds.count('eviction')} other "
        f"eviction(s) on {ledger.cluster}; {len(ledger.unrecovered())} victim(s) not re-admitted"
    )
