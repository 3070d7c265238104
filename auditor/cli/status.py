"""`kueue-gitops status`: what a cluster holds right now."""

from __future__ import annotations

import click

from auditor import status as auditor_status
from auditor.cli.options import (
    Context,
    cluster_access,
    cluster_deadline,
    finish,
    output_format,
    pass_context,
)
from auditor.live.access import connect
from auditor.model import ClusterResult, Report


@click.command()
@click.option("--cluster", "cluster", required=True, help="Repo cluster to show.")
@output_format
@click.option(
    "--events",
    default=auditor_status.EVENTS,
    show_default=True,
    type=click.IntRange(min=0),
    help="How many of the last Kueue events to show per namespace.",
)
@cluster_access
@cluster_deadline
@pass_context
def status(
    ctx: Context,
    cluster: str,
    output: str,
    events: int,
    kubeconfig: str | None,
    context: str | None,
    timeout: float,
) -> None:
    """Show a cluster's live ClusterQueues and LocalQueues with their Workloads, the last
    events that mention Kueue in each namespace, and which namespaces admit work.

    Workloads count per ClusterQueue and LocalQueue by state: pending; admitted; evicted
    (preempted or stopped, waiting to be admitted again); reserved (quota held, admission
    checks pending); inactive; finished.

    \b
    -o json writes the report (schemaVersion, command, status, clusters, no findings) with the
    snapshot's keys beside it:
      cluster        the cluster's name
      clusterQueues  [{name, cohort, stopPolicy, workloads: {STATE: count},
                       quota: [{flavor, resource, nominalQuota, borrowingLimit?,
                                lendingLimit?}]}]
      localQueues    [{namespace, name, clusterQueue, workloads: {STATE: count}}]
      workloads      [{namespace, name, localQueue, clusterQueue, state, priority,
                       reason (why it waits or was evicted, else null)}]
      pools          [{flavor, readyNodes (the Ready nodes its nodeLabels select),
                       resources: {RESOURCE: {allocatable, promised (the nominalQuota
                       of every ClusterQueue on it)}}}]
      events         {NAMESPACE: [{time, type, reason, object, message, count}]},
                     the last --events of each, oldest first
      namespaces     [{name, admissionLabel (its value, or null), admits}]
    """
    profile = ctx.repository().cluster(cluster)
    reached = connect(profile, kubeconfig=kubeconfig, context=context, deadline=timeout)
    live = auditor_status.read(reached, profile)
    snapshot = auditor_status.Snapshot(live, profile, events)
    result = ClusterResult(profile.name, throttled=reached.throttled)
    finish(Report("status", clusters=[result], section=snapshot), output)
