"""The preemption ledger as JSON (the report contract's `preemptions` command), markdown, text,
and Prometheus metrics for the eviction-rate SLO."""

from __future__ import annotations

import datetime as dt
import json
import typing as t
from pathlib import Path

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import write_to_textfile
from prometheus_client.metrics_core import GaugeMetricFamily, Metric

from auditor.kueue.ledger import Eviction, Ledger
from auditor.model import Report

EVICTIONS = "kueue_gitops_ledger_evictions"
UNRECOVERED = "kueue_gitops_ledger_unrecovered_victims"
NO_CHECKPOINT = "kueue_gitops_ledger_victims_without_checkpoint"
WINDOW = "kueue_gitops_ledger_window_seconds"


def _stamp(ledger: Ledger, which: str) -> str:
    when: dt.datetime = getattr(ledger, which)
    return when.isoformat().replace("+00:00", "Z")


def to_json(ledger: Ledger, report: Report) -> dict[str, t.Any]:
    return {
        **report.to_json(),
        "since": _stamp(ledger, "since"),
        "until": _stamp(ledger, "until"),
        "preemptions": [e.to_json() for e in ledger.entries],
        "counts": [
            {"clusterQueue": cq or None, "kind": kind, "reason": reason, "count": n}
            for (cq, kind, reason), n in sorted(ledger.counts().items())
        ],
    }


def write_json(ledger: Ledger, report: Report, out: t.TextIO) -> None:
    json.dump(to_json(ledger, report), out, indent=2)
    out.write("\n")


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
        f"## Preemption ledger: {ledger.cluster}, {_stamp(ledger, 'since')} to "
        f"{_stamp(ledger, 'until')}\n\n"
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


class _Collector:
    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def collect(self) -> t.Iterator[Metric]:
        cluster = self.ledger.cluster
        labels = ["cluster", "cluster_queue", "kind", "reason"]
        evictions = GaugeMetricFamily(
            EVICTIONS,
            "Evictions in the ledger's window, from Workload Events and conditions.",
            labels=labels,
        )
        unrecovered = GaugeMetricFamily(
            UNRECOVERED, "Victims in the window not admitted again since.", labels=labels
        )
        bare = GaugeMetricFamily(
            NO_CHECKPOINT, "Victims whose Job carries no checkpoint reference.", labels=labels
        )
        for (cq, kind, reason), n in sorted(self.ledger.counts().items()):
            key = [cluster, cq, kind, reason]
            mine = [
                e
                for e in self.ledger.entries
                if (e.cluster_queue or "", e.kind, e.reason) == (cq, kind, reason)
            ]
            evictions.add_metric(key, n)
            unrecovered.add_metric(key, sum(1 for e in mine if e in self.ledger.unrecovered()))
            bare.add_metric(key, sum(1 for e in mine if e.recovery and not e.recovery.checkpoint))
        window = GaugeMetricFamily(WINDOW, "The ledger's window.", labels=["cluster"])
        window.add_metric([cluster], (self.ledger.until - self.ledger.since).total_seconds())
        yield from (evictions, unrecovered, bare, window)


def write_metrics(ledger: Ledger, path: Path) -> None:
    """A node_exporter textfile: the ledger's counts by ClusterQueue, kind and reason."""
    registry = CollectorRegistry()
    registry.register(_Collector(ledger))
    write_to_textfile(str(path), registry)
