"""`kueue-gitops plan job FILE`: when a Job submitted now would be admitted, where, whom it
preempts, or why never; simulated from a live cluster's queues."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import click

from auditor.cli.options import (
    Context,
    cluster_access,
    cluster_deadline,
    output_format,
    pass_context,
    renderers_mode,
)
from auditor.cli.plan import options
from auditor.errors import ConfigError


@click.command(cls=options.Verb)
@options.path_argument("job_file", "FILE")
@options.cluster("The live cluster it is submitted to.", required=True)
@options.head("The revision whose Kueue configuration the cluster runs.")
@options.run_for(
    "How long each Workload already on the cluster runs (counted from its admission), and the Job."
)
@cluster_access
@cluster_deadline
@output_format
@renderers_mode
@pass_context
def job(
    ctx: Context,
    job_file: Path,
    cluster: str,
    head: str,
    run_for: float,
    kubeconfig: str | None,
    context: str | None,
    timeout: float,
    output: str,
) -> None:
    """When a Job submitted now is admitted, where, whom it preempts.

    FILE is a batch/v1 Job, submitted now: simulated from the cluster's queues, admitted and
    pending Workloads, with --head's Kueue configuration; the answer is when it is admitted, on
    which flavor, whom it preempts, or why never (docs/replay.md).
    """
    from auditor.cli.sandbox import _testenv  # the simulator's build, only when forecasting
    from auditor.live.access import connect
    from auditor.replay import livestart, sim, stamp
    from auditor.replay.trace import Trace
    from auditor.repo import boundaries
    from auditor.repo.gitsource import revision
    from auditor.repo.root import find_root
    from auditor.sandbox.kueuesim import ensure_sim

    workload = livestart.job_workload(job_file, run_for)
    root = find_root(ctx.repo_dir or Path.cwd())
    with revision(root, head) as repo:
        if cluster not in repo.clusters:
            raise ConfigError(f"cluster {cluster} does not exist at {head}")
        profile = repo.cluster(cluster)
        binary, release = ensure_sim(_testenv(ctx), profile.kueue_version, log=ctx.note)
        settings = sim.configured(repo, cluster)
        config = boundaries.kueue_configuration(repo, cluster) or {}
    client = connect(profile, kubeconfig=kubeconfig, context=context, deadline=timeout)
    objects = livestart.read_objects(client, profile.kueue_api)
    now = dt.datetime.now(dt.UTC)
    start = livestart.read_start(client, profile.kueue_api, now=now, run_for=run_for).then(
        [workload], [livestart.JOB_NAME]
    )
    document = json.dumps({"objects": objects, **settings, "workloads": start.workloads})
    side = sim.SimSide("job", head, cluster, binary, release, document)
    out, _stderr, _took = sim.run_side(side, sim.deadline(Trace(cluster, {}, [workload])))
    result = livestart.forecast(out, start, workload, cluster=cluster, release=release)
    inputs = stamp.assumed(run_for=run_for, job=True)
    result.stamp = stamp.stamp(out.get("simulated"), release, config, inputs=inputs)
    options.report(cluster, result, output)
