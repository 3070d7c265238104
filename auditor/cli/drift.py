"""`kueue-gitops drift`: the repository against the live clusters."""

from __future__ import annotations

import typing as t
from pathlib import Path

import click

from auditor.cli.options import (
    Adoption,
    Context,
    baseline_options,
    cluster_access,
    cluster_deadline,
    emit,
    exit_for,
    metrics_output,
    one_cluster_context,
    output_format,
    pass_context,
    renderers_mode,
)
from auditor.drift import comparer
from auditor.repo.profiles import ClusterProfile
from auditor.speed import collector

if t.TYPE_CHECKING:
    from auditor.live.kube import KubeCluster


@click.command()
@click.option(
    "--cluster",
    "clusters",
    multiple=True,
    metavar="NAME",
    help="Repo cluster to audit (repeatable; default: every cluster in clusters/).",
)
@click.option(
    "--fleet",
    is_flag=True,
    help="Add the fleet summary: each cluster's Kueue release, the versions its Kueue CRDs "
    "serve and store, and a finding for a cluster more than one minor release behind the "
    "newest the repository pins.",
)
@click.option(
    "--no-cache",
    is_flag=True,
    help="Neither read nor write the cache of parsed files validate and drift keep (in the "
    "user cache directory).",
)
@baseline_options
@cluster_access
@cluster_deadline
@output_format
@metrics_output
@renderers_mode
@pass_context
def drift(
    ctx: Context,
    clusters: tuple[str, ...],
    fleet: bool,
    no_cache: bool,
    baseline_file: Path | None,
    write_baseline: bool,
    kubeconfig: str | None,
    context: str | None,
    timeout: float,
    output: str,
    metrics_file: Path | None,
    pushgateway: str | None,
) -> None:
    """Report every difference between the repo and the live clusters that matters.

    Exit 0 clean, 1 drift, 3 incomplete (a cluster down, without a kubeconfig context or
    whose credential plugin fails, a LIST forbidden or answered with something else, the
    --timeout passed); the other clusters are still reported.

    The repository's unchanged files are read from the cache validate keeps (under
    $KUEUE_GITOPS_CACHE, $XDG_CACHE_HOME/kueue-gitops or ~/.cache/kueue-gitops).

    With --baseline FILE, the drift recorded in FILE (by --write-baseline) fails nothing: a
    running estate's differences accepted while they are worked off (docs/usage.md).
    """
    collector.seldom_to_exit()  # what it imports and reads lives to the end: little to collect
    one_cluster_context(context, clusters)
    adoption = Adoption.given(baseline_file, write_baseline, "drift")
    repo = ctx.repository()
    names = list(clusters) or sorted(repo.clusters)
    for name in names:
        repo.cluster(name)  # an unknown cluster is a usage error, before anything starts
    # The repository side starts before this process imports the Kubernetes client: loaded,
    # prepared and compared apart from the readers' interpreter (auditor/drift/comparer.py).
    schemas = repo.root / "schemas" if repo.root else None
    comparing = comparer.start(repo, names, schemas, cache=not no_cache)
    from auditor.drift.audit import audit
    from auditor.live.access import connect

    def reach(profile: ClusterProfile) -> KubeCluster:
        return connect(profile, kubeconfig=kubeconfig, context=context, deadline=timeout)

    report = audit(repo, names, reach, schemas_root=schemas, comparing=comparing, with_fleet=fleet)
    for result in report.clusters:
        for said in result.notes:
            ctx.note(f"cluster {result.name}: {said}")
    adoption.apply(ctx, report, partial=bool(clusters))
    emit(report, output)
    if metrics_file is not None or pushgateway:
        from auditor.report.metrics import export  # prometheus_client: only when asked for

        export(report, metrics_file=metrics_file, pushgateway=pushgateway, partial=bool(clusters))
    exit_for(report)
