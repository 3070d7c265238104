"""The auditor's results as Prometheus metrics, so drift feeds the same dashboards and alerts.

`validate` and `drift` can write a node_exporter textfile-collector file and push to a
Pushgateway. Both carry the finding counts by cluster, category and severity, whether each
cluster's audit completed, and the time of the last *complete* audit: an incomplete run (exit 3)
must never look like a fresh clean one, so it leaves that timestamp where the last complete run
put it (read back from the previous file; left untouched on the gateway). A run limited to some
clusters (`--cluster`) keeps the other clusters' series in the file it rewrites.
`preemptions --metrics-file` writes the preemption ledger's counts for the eviction-rate SLO.
"""

from __future__ import annotations

import collections
import time
import typing as t
from pathlib import Path

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import generate_latest, push_to_gateway, pushadd_to_gateway
from prometheus_client.metrics_core import GaugeMetricFamily, Metric
from prometheus_client.parser import text_string_to_metric_families

from auditor.errors import AuditorError
from auditor.kueue.ledger import Ledger
from auditor.model import Report
from auditor.repo.outfile import write_whole

JOB = "kueue-gitops"
FINDINGS = "kueue_gitops_findings"
COMPLETE = "kueue_gitops_audit_complete"
LAST_AUDIT = "kueue_gitops_last_audit_timestamp_seconds"
LAST_COMPLETE = "kueue_gitops_last_complete_audit_timestamp_seconds"


class MetricsExportError(AuditorError):
    """The metrics could not be written or pushed (exit 3: the run's signal was not delivered)."""


def cluster_status(report: Report) -> dict[str, bool]:
    """Each cluster the run covered, and whether its audit completed ("" for repo-wide)."""
    status = {c.name: c.status == "ok" for c in report.clusters}
    for finding in report.findings:
        status.setdefault(finding.cluster or "", not report.incomplete)
    return status or {"": not report.incomplete}


class _ReportCollector:
    """Turns one report into metric families; `only` limits them to one cluster (a push group)."""

    def __init__(
        self,
        report: Report,
        now: float,
        previous: dict[tuple[str, str], float],
        only: str | None = None,
        kept: Samples | None = None,
    ) -> None:
        self.report, self.now, self.previous, self.only = report, now, previous, only
        self.kept = kept or {}  # family -> the other clusters' samples, written back as they were

    def collect(self) -> t.Iterator[Metric]:
        command = self.report.command
        status = {c: ok for c, ok in cluster_status(self.report).items() if self.only in (None, c)}
        counts = collections.Counter(
            (f.cluster or "", f.category, str(f.severity))
            for f in self.report.findings
            if self.only in (None, f.cluster or "") and f.suppressed is None
        )
        findings = GaugeMetricFamily(
            FINDINGS,
            "Findings of the last audit, by cluster, category and severity (none suppressed).",
            labels=["command", "cluster", "category", "severity"],
        )
        for (cluster, category, severity), n in sorted(counts.items()):
            findings.add_metric([command, cluster, category, severity], n)
        complete = GaugeMetricFamily(
            COMPLETE,
            "1 when the last audit of the cluster completed, 0 when it could not (exit 3).",
            labels=["command", "cluster"],
        )
        last_complete = GaugeMetricFamily(
            LAST_COMPLETE,
            "Unix time of the last audit of the cluster that completed.",
            labels=["command", "cluster"],
        )
        for cluster, ok in sorted(status.items()):
            complete.add_metric([command, cluster], 1 if ok else 0)
            stamp = self.now if ok else self.previous.get((command, cluster))
            if stamp is not None:
                last_complete.add_metric([command, cluster], stamp)
        last = GaugeMetricFamily(
            LAST_AUDIT, "Unix time of the last audit, complete or not.", labels=["command"]
        )
        last.add_metric([command], self.now)
        for family in (findings, complete, last_complete, last):
            for labels, value in self.kept.get(family.name, []):
                family.add_metric([labels.get(n, "") for n in _LABELS[family.name]], value)
        yield from (findings, complete, last_complete, last)


Samples = dict[str, list[tuple[dict[str, str], float]]]  # family -> (labels, value) pairs
_LABELS = {
    FINDINGS: ("command", "cluster", "category", "severity"),
    COMPLETE: ("command", "cluster"),
    LAST_COMPLETE: ("command", "cluster"),
    LAST_AUDIT: ("command",),
}


def _others(report: Report, families: list[Metric]) -> Samples:
    """The samples of a previous file that this run does not rewrite: other commands', and
    this command's for clusters the run did not cover."""
    covered = set(cluster_status(report))
    kept: Samples = {}
    for family in families:
        for s in family.samples:
            if s.name not in _LABELS:
                continue
            ours = s.labels.get("command") == report.command
            if ours and (s.name == LAST_AUDIT or s.labels.get("cluster", "") in covered):
                continue
            kept.setdefault(s.name, []).append((dict(s.labels), s.value))
    return kept


def _registry(collector: _ReportCollector) -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    return registry


def _previous(path: Path) -> list[Metric]:
    if not path.is_file():
        return []
    try:
        return list(text_string_to_metric_families(path.read_text()))
    except (ValueError, OSError) as exc:
        raise MetricsExportError(
            f"{path}: not a Prometheus text file we can update: {exc}"
        ) from exc


def previous_completions(path: Path) -> dict[tuple[str, str], float]:
    """(command, cluster) -> last complete audit time, from a textfile we wrote before."""
    families = _previous(path)
    return {
        (s.labels.get("command", ""), s.labels.get("cluster", "")): s.value
        for family in families
        for s in family.samples
        if s.name == LAST_COMPLETE
    }


def write_textfile(
    report: Report, path: Path, *, now: float | None = None, partial: bool = False
) -> None:
    """Write (whole, as the textfile collector needs) the metrics of `report` to `path`.

    `partial`: the run covered only some clusters; the others' series stay as they were.
    """
    kept = _others(report, _previous(path)) if partial else None
    collector = _ReportCollector(report, now or time.time(), previous_completions(path), kept=kept)
    write_whole(path, generate_latest(_registry(collector)), what="metrics")


def push(report: Report, gateway: str, *, now: float | None = None, timeout: float = 10) -> None:
    """Push one group per cluster (job, command, cluster) to a Pushgateway.

    A complete cluster replaces its group (PUT). An incomplete one only adds (POST), so the
    gateway keeps the last complete audit's timestamp instead of losing it.
    """
    stamp = now or time.time()
    for cluster, ok in sorted(cluster_status(report).items()):
        registry = _registry(_ReportCollector(report, stamp, {}, only=cluster))
        send = push_to_gateway if ok else pushadd_to_gateway
        try:
            send(
                gateway,
                job=JOB,
                registry=registry,
                grouping_key={"command": report.command, "cluster": cluster},
                timeout=timeout,
            )
        except OSError as exc:  # urllib's errors, and the client's own for a non-2xx answer
            raise MetricsExportError(f"cannot push metrics to {gateway}: {exc}") from exc


def export(
    report: Report,
    *,
    metrics_file: Path | None = None,
    pushgateway: str | None = None,
    now: float | None = None,
    partial: bool = False,
) -> None:
    """Deliver the report's metrics wherever the command was asked to (nothing when neither).

    `partial`: the run covered only the clusters named with --cluster (see write_textfile).
    """
    stamp = now or time.time()
    if metrics_file is not None:
        write_textfile(report, metrics_file, now=stamp, partial=partial)
    if pushgateway:
        push(report, pushgateway, now=stamp)


# -- the preemption ledger (`preemptions --metrics-file`), for the eviction-rate SLO ------------

LEDGER_EVICTIONS = "kueue_gitops_ledger_evictions"
LEDGER_UNRECOVERED = "kueue_gitops_ledger_unrecovered_victims"
LEDGER_NO_CHECKPOINT = "kueue_gitops_ledger_victims_without_checkpoint"
LEDGER_WINDOW = "kueue_gitops_ledger_window_seconds"


class _LedgerCollector:
    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def collect(self) -> t.Iterator[Metric]:
        cluster = self.ledger.cluster
        labels = ["cluster", "cluster_queue", "kind", "reason"]
        evictions = GaugeMetricFamily(
            LEDGER_EVICTIONS,
            "Evictions in the ledger's window, from Workload Events and conditions.",
            labels=labels,
        )
        unrecovered = GaugeMetricFamily(
            LEDGER_UNRECOVERED, "Victims in the window not admitted again since.", labels=labels
        )
        bare = GaugeMetricFamily(
            LEDGER_NO_CHECKPOINT,
            "Victims whose Job carries no checkpoint reference.",
            labels=labels,
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
        window = GaugeMetricFamily(LEDGER_WINDOW, "The ledger's window.", labels=["cluster"])
        window.add_metric([cluster], (self.ledger.until - self.ledger.since).total_seconds())
        yield from (evictions, unrecovered, bare, window)


def write_ledger(ledger: Ledger, path: Path) -> None:
    """A node_exporter textfile: the ledger's counts by ClusterQueue, kind and reason."""
    registry = CollectorRegistry()
    registry.register(_LedgerCollector(ledger))
    write_whole(path, generate_latest(registry), what="metrics")
