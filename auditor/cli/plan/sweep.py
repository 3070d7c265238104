"""`kueue-gitops plan sweep GRID`: the smallest change to --head that meets the grid's target."""

from __future__ import annotations

import typing as t
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

if t.TYPE_CHECKING:
    from auditor.replay.sweep import Sweep
    from auditor.speed.parallel import Engine

Access = tuple[str | None, str | None, float]


@click.command(cls=options.Verb)
@options.path_argument("grid_file", "GRID")
@click.option(
    "--trace",
    "trace_file",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="TRACE",
    help="The workload trace (`kueue-gitops trace`) each point of the grid is simulated on.",
)
@options.head("The revision the grid's values change.")
@options.cluster("The cluster to simulate (default: the trace's).")
@click.option(
    "--on",
    "on",
    default="local",
    show_default=True,
    metavar="local|ray[=ADDRESS]",
    help="Where the grid's simulations run: the local cores, or as tasks on a Ray cluster "
    "(`ray`: the one ray.init() finds: RAY_ADDRESS, else a local instance; `ray=HOST:PORT`: "
    "that cluster). Ray installs with kueue-gitops[ray] (docs/replay.md).",
)
@options.live(
    "Bound the points by the live nodes' capacity rather than the cluster profile's: a point "
    "whose quotas exceed what the nodes hold is infeasible."
)
@cluster_access
@cluster_deadline
@output_format
@renderers_mode
@pass_context
def sweep(
    ctx: Context,
    grid_file: Path,
    trace_file: Path,
    head: str,
    cluster: str | None,
    on: str,
    live: bool,
    kubeconfig: str | None,
    context: str | None,
    timeout: float,
    output: str,
) -> None:
    """The smallest change to --head that meets a grid's target.

    GRID names values (quotas, limits, preemption policies, fair-sharing weights) and a target;
    the trace is simulated on --head with every combination of them: the frontier, and the
    smallest change that meets the target (exit 1 when none does). A point whose quotas exceed
    what the nodes hold (the profile's capacity, or the live nodes with --live) is infeasible
    (docs/replay.md).
    """
    from auditor.speed import parallel

    access = (kubeconfig, context, timeout) if live else None
    # the engine first: a missing extra or an unreachable cluster before minutes of building
    with parallel.engine(on) as engine:
        result, name = _sweep(ctx, grid_file, trace_file, head, cluster, engine, access)
    options.report(name, result, output)


def _sweep(
    ctx: Context,
    grid: Path,
    path: Path,
    head: str,
    cluster: str | None,
    engine: Engine,
    access: Access | None,
) -> tuple[Sweep, str]:
    from auditor.cli.sandbox import _testenv  # the simulator's build, only when sweeping
    from auditor.live.access import connect
    from auditor.replay import revisions, sim, sweep, trace
    from auditor.repo.gitsource import revision
    from auditor.repo.root import find_root
    from auditor.sandbox.kueuesim import ensure_sim

    spec = sweep.read_spec(grid)
    loaded = trace.read(path)
    days = [loaded, *(trace.read(p) for p in spec.traces)]
    name = cluster or loaded.cluster
    with revision(find_root(ctx.repo_dir or Path.cwd()), head) as repo:
        if name not in repo.clusters:
            raise ConfigError(f"cluster {name} does not exist at {head}")
        profile = repo.cluster(name)
        nodes = None
        if access is not None:  # what the nodes hold, read live rather than the profile's
            kubeconfig, context, timeout = access
            client = connect(profile, kubeconfig=kubeconfig, context=context, deadline=timeout)
            nodes = client.list("v1", "Node")
        binary, release = ensure_sim(_testenv(ctx), profile.kueue_version, log=ctx.note)
        result = sweep.sweep(
            repo,
            name,
            days,
            spec,
            binary=binary,
            release=release,
            tenant_of=revisions.tenants_of(repo, name),
            within=max(sim.deadline(day) for day in days),
            engine=engine,
            nodes=nodes,
        )
    return result, name
