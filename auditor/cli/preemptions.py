"""`kueue-gitops preemptions`: the ledger of every eviction on a cluster, with recovery points."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import click

from auditor.cli.options import (
    Context,
    cluster_access,
    cluster_deadline,
    emit,
    exit_for,
    output_format,
    pass_context,
)
from auditor.errors import ClusterAccessError
from auditor.kueue.ledger import Ledger
from auditor.live.access import connect
from auditor.model import ClusterResult, Report
from auditor.runbook import preemptions

_SPAN = re.compile(r"([0-9]+)([smhdw])")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def _window(_ctx: click.Context, _param: click.Parameter, value: str) -> dt.timedelta:
    parts = _SPAN.findall(value)
    if not parts or "".join(n + u for n, u in parts) != value:
        raise click.BadParameter(f"{value!r} is no duration (e.g. 30m, 24h, 7d)")
    return dt.timedelta(seconds=sum(int(n) * _UNIT[u] for n, u in parts))


@click.command(name="preemptions")
@click.option("--cluster", "cluster", required=True, metavar="NAME", help="Repo cluster to read.")
@click.option(
    "--since",
    default="24h",
    show_default=True,
    callback=_window,
    help="How far back (s, m, h, d, w; e.g. 90m, 7d).",
)
@output_format
@click.option(
    "--metrics-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the counts for node_exporter's textfile collector (*.prom).",
)
@cluster_access
@cluster_deadline
@pass_context
def preemptions_command(
    ctx: Context,
    cluster: str,
    since: dt.timedelta,
    output: str,
    metrics_file: Path | None,
    kubeconfig: str | None,
    context: str | None,
    timeout: float,
) -> None:
    """List every eviction on a cluster in a window: each preemption's victim, its
    ClusterQueue and priority, the preemptor, the reason (InClusterQueue,
    InCohortReclamation, InCohortReclaimWhileBorrowing, InCohortFairSharing), the time, and
    the victim's recovery point: the checkpoint its Job carries (annotation
    kueue-gitops.io/checkpoint), whether it was admitted again and whether it completed.
    Other evictions (a stopped queue, PodsReady timeout) are listed too, without a preemptor.

    Built from the Workloads' Events (kept an hour by default) and conditions. Exit 0 when
    read completely, 3 when not.
    """
    profile = ctx.repository().cluster(cluster)
    report = Report("preemptions", clusters=[ClusterResult(profile.name)])
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    found = Ledger(profile.name, now - since, now)
    try:
        live = connect(profile, kubeconfig=kubeconfig, context=context, deadline=timeout)
        found = preemptions.read(live, profile.kueue_api, since, now)
    except ClusterAccessError as exc:
        report.clusters[0].status = "incomplete"
        report.clusters[0].errors.append(str(exc))
    report.section = found
    emit(report, output)
    if metrics_file and not report.incomplete:
        from auditor.report.metrics import write_ledger  # prometheus_client: only when asked

        write_ledger(found, metrics_file)
    exit_for(report)
