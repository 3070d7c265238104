"""`kueue-gitops plan diff`: what a change between two git revisions does, in cluster terms."""

from __future__ import annotations

from pathlib import Path

import click

from auditor.cli.options import (
    Context,
    cluster_access,
    cluster_deadline,
    finish,
    one_cluster_context,
    output_format,
    pass_context,
    renderers_mode,
)
from auditor.cli.plan import options


@click.command(cls=options.Verb)
@options.base
@options.head()
@options.clusters
@options.live(
    "Weigh quota cuts, removals and changed admission policies against the clusters' live "
    "usage, Workloads, Jobs and RBAC."
)
@cluster_access
@cluster_deadline
@output_format
@renderers_mode
@pass_context
def diff(
    ctx: Context,
    base: str,
    head: str,
    clusters: tuple[str, ...],
    live: bool,
    kubeconfig: str | None,
    context: str | None,
    timeout: float,
    output: str,
) -> None:
    """What a change from --base to --head does, in cluster terms.

    Quota, cohorts, admission, RBAC powers and objects, cluster by cluster.
    Reads both revisions from git without touching the working tree. A change to a field the API
    server cannot change on an existing object is an error. With --live, a quota cut
    below what is in use warns which Workloads it exposes, and removing a queue or a namespace's
    admission while Workloads are pending or admitted there is an error; every admission policy
    the change adds or tightens is judged against what runs now (the running Jobs it would
    refuse; for the namespace-label policy, who may relabel namespaces and would be refused).
    """
    from auditor.live.access import connect
    from auditor.plan import live as plan_live
    from auditor.plan.offline import build
    from auditor.repo.gitsource import revision
    from auditor.repo.root import find_root

    if live:
        one_cluster_context(context, clusters)
    root = find_root(ctx.repo_dir or Path.cwd())
    with revision(root, base) as before, revision(root, head) as after:
        result = build(before, after, clusters)
    if live:
        plan_live.check(
            result, lambda p: connect(p, kubeconfig=kubeconfig, context=context, deadline=timeout)
        )
    finish(result.report, output)  # markdown: one pull-request comment
