"""`kueue-gitops verify`: admission conformance of a live cluster, with probe Jobs."""

from __future__ import annotations

import click

from auditor.cli.options import Context, cluster_access, finish, output_format, pass_context
from auditor.live.access import connect
from auditor.repo import boundaries
from auditor.verify import verification


@click.command()
@click.option("--cluster", "cluster", required=True, metavar="NAME", help="Repo cluster to probe.")
@cluster_access
@output_format  # json adds every check, passed or not, with its Workloads
@click.option(
    "--timeout", default=60.0, show_default=True, help="Seconds to wait for Kueue to act."
)
@click.option(
    "--watch-seconds",
    default=10,
    show_default=True,
    type=click.IntRange(1, 50),
    help="How long the unlabelled-namespace and unqueued Jobs are watched for a Pod.",
)
@pass_context
def verify(
    ctx: Context,
    cluster: str,
    kubeconfig: str | None,
    context: str | None,
    output: str,
    timeout: float,
    watch_seconds: int,
) -> None:
    """Check with probe Jobs that Kueue admits as configured: nominal quota, borrowing limit,
    preemption by priority, no admission from unlabelled namespaces, stopPolicy Hold.

    Runs in scratch namespaces and deletes everything it made, also on failure or interrupt.
    Refuses clusters whose profile lacks `verify: {allowed: true}` (exit 2).
    Exit 0 every check passed, 1 a check failed, 3 incomplete.
    """
    repo = ctx.repository()
    profile = repo.cluster(cluster)
    verification.ensure_allowed(profile)  # before any connection is made
    tenants = [repo.tenants[name] for name in sorted(repo.tenants)]
    declared = boundaries.boundaries(
        profile, repo.tenants, repo.load([cluster]).for_cluster(cluster)
    )
    live = connect(profile, kubeconfig=kubeconfig, context=context)
    result = verification.run(
        live,
        profile,
        tenants,
        timeout=timeout,
        watch_seconds=watch_seconds,
        boundaries=declared,
    )
    finish(result.report, output)
