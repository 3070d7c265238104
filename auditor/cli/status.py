"""`kueue-gitops status`: what a cluster holds right now."""

from __future__ import annotations

import click

from auditor import status as live_status
from auditor.cli.options import Context, cluster_access, pass_context
from auditor.live.access import connect


@click.command()
@click.option("--cluster", "cluster", required=True, help="Repo cluster to show.")
@cluster_access
@pass_context
def status(ctx: Context, cluster: str, kubeconfig: str | None, context: str | None) -> None:
    """Show a cluster's live ClusterQueues, LocalQueues and namespaces' admission labels."""
    profile = ctx.repository().cluster(cluster)
    live = live_status.read(connect(profile, kubeconfig=kubeconfig, context=context), profile)
    click.echo(live_status.render_text(live, profile))
