"""`kueue-gitops plan`: what a change between two git revisions does, in cluster terms."""

from __future__ import annotations

from pathlib import Path

import click
from click.core import ParameterSource

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
from auditor.errors import ConfigError
from auditor.live.access import connect
from auditor.plan import live as plan_live
from auditor.plan.offline import build
from auditor.repo.gitsource import revision
from auditor.repo.layout import find_root


@click.command()
@click.option(
    "--base", metavar="REV", help="The revision the change starts from (required but with --sweep)."
)
@click.option("--head", default="HEAD", show_default=True, metavar="REV", help="The change.")
@click.option("--cluster", "clusters", multiple=True, metavar="C", help="Only these clusters.")
@cluster_access
@cluster_deadline
@click.option(
    "--live/--offline",
    default=False,
    show_default=True,
    help="Weigh quota cuts, removals and changed admission policies against the clusters' live "
    "usage, Workloads, Jobs and RBAC.",
)
@click.option(
    "--replay",
    "replay_trace",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="TRACE",
    help="Replay this workload trace (`kueue-gitops trace`) through Kueue on --base and on "
    "--head, and compare waits, borrowing and preemptions.",
)
@click.option(
    "--engine",
    type=click.Choice(["sim", "kueue"]),
    default="sim",
    show_default=True,
    help="With --replay: sim runs Kueue's own scheduler on a simulated clock (deterministic, a "
    "day in seconds); kueue runs the real Kueue on a sandbox in compressed real time.",
)
@click.option(
    "--speed",
    default=30.0,
    show_default=True,
    type=float,
    help="With --replay --engine kueue: how much faster than the trace to replay (at most 60).",
)
@click.option(
    "--repeat",
    default=1,
    show_default=True,
    type=int,
    help="With --replay --engine kueue: replay each side this many times (at most 5) and flag a "
    "wait only when the head's replays all wait longer than the base's.",
)
@click.option(
    "--sweep",
    "sweep_file",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="GRID",
    help="With --replay: simulate the trace on --head with every combination of GRID's values "
    "(quotas, limits, preemption policies, fair-sharing weights) and report the frontier and the "
    "smallest change meeting GRID's target; a point whose quotas exceed what the nodes hold (the "
    "profile's capacity, or the live nodes with --live) is infeasible (docs/replay.md).",
)
@click.option(
    "--on",
    "on",
    default="local",
    show_default=True,
    metavar="local|ray[=ADDRESS]",
    help="With --sweep: where the grid's simulations run: the local cores, or as tasks on a Ray "
    "cluster (`ray`: the one ray.init() finds: RAY_ADDRESS, else a local instance; "
    "`ray=HOST:PORT`: that cluster). Ray installs with kueue-gitops[ray] (docs/replay.md).",
)
@click.option(
    "--job",
    "job_file",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="With --live: this batch/v1 Job submitted now, simulated from the cluster's queues, "
    "admitted and pending Workloads: admitted when, on which flavor, whom it preempts, or why "
    "never (docs/replay.md).",
)
@click.option(
    "--run-for",
    "run_for",
    default=3600.0,
    show_default=True,
    type=float,
    metavar="SECONDS",
    help="With --live (--job or --replay): how long each Workload already on the cluster runs "
    "(counted from its admission), and the Job.",
)
@click.option(
    "--timeline",
    "timeline_file",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    metavar="FILE",
    help="With --replay: also write the simulated day, per LocalQueue and side, to FILE (.csv or "
    ".jsonl): time, side, queue, tenant, running, pending, admitted, preempted, gpus.",
)
@output_format
@renderers_mode
@pass_context
def plan(
    ctx: Context,
    base: str | None,
    head: str,
    clusters: tuple[str, ...],
    kubeconfig: str | None,
    context: str | None,
    timeout: float,
    live: bool,
    replay_trace: Path | None,
    engine: str,
    speed: float,
    repeat: int,
    sweep_file: Path | None,
    on: str,
    job_file: Path | None,
    run_for: float,
    timeline_file: Path | None,
    output: str,
) -> None:
    """Quota, cohorts, admission, RBAC powers and objects changed from --base to --head.

    Reads both revisions from git without touching the working tree. A change to a field the API
    server cannot change on an existing object is an error. With --live, a quota cut
    below what is in use warns which Workloads it exposes, and removing a queue or a namespace's
    admission while Workloads are pending or admitted there is an error; every admission policy
    the change adds or tightens is judged against what runs now (the running Jobs it would
    refuse; for the namespace-label policy, who may relabel namespaces and would be refused).

    With --replay TRACE and one --cluster, the trace's Workloads go through each revision's
    Kueue: by default (--engine sim) Kueue's own scheduler on a simulated clock, or (--engine
    kueue) the real Kueue on a fresh sandbox at --speed; each tenant's admission waits,
    GPU-hours, borrowing and preemptions are compared: exit 1 when a tenant's p95 wait rises past
    the threshold, the head never admits work the base did, or it preempts in a loop.

    With --live --replay TRACE and one --cluster, both revisions start from the cluster's queues
    as they are now (its admitted and pending Workloads, read once) and the trace's Workloads
    arrive from now on: this change merged now (docs/replay.md).

    With --sweep GRID --replay TRACE (no --base), the trace is simulated on --head with every
    combination of the grid's values: the frontier, and the smallest change that meets the
    grid's target (exit 1 when none does).
    """
    if job_file is not None:
        if not live or base is not None or replay_trace is not None:
            raise ConfigError("--job FILE is submitted to a live cluster: give --live, no --base")
        one_cluster_context(context, clusters)
        _job(ctx, head, clusters, job_file, run_for, kubeconfig, context, timeout, output)
        return
    if sweep_file is not None:
        if replay_trace is None or base is not None:
            raise ConfigError("--sweep GRID simulates --head: give --replay TRACE and no --base")
        if live:
            one_cluster_context(context, clusters)
        access = (kubeconfig, context, timeout) if live else None
        _sweep(ctx, head, clusters, replay_trace, sweep_file, on, output, access)
        return
    if on != "local":
        raise ConfigError(f"--on {on} runs a sweep's simulations: give --sweep GRID too")
    if base is None:
        raise ConfigError("plan compares two revisions: give --base REV")
    if replay_trace is not None and live:
        if len(clusters) != 1:
            raise ConfigError(
                "--live --replay starts both revisions from one live cluster's queues: give one "
                "--cluster"
            )
        given = click.get_current_context().get_parameter_source
        paced = [f"--{n}" for n in ("speed", "repeat") if given(n) == ParameterSource.COMMANDLINE]
        if paced:
            raise ConfigError(
                f"{' and '.join(paced)} pace the real Kueue's replay (--engine kueue); "
                "--live --replay is simulated: leave them out"
            )
        one_cluster_context(context, clusters)
        _live_replay(
            ctx,
            base,
            head,
            clusters,
            replay_trace,
            engine,
            run_for,
            (kubeconfig, context, timeout),
            timeline_file,
            output,
        )
        return
    if replay_trace is not None:
        _replay(
            ctx, base, head, clusters, replay_trace, engine, speed, repeat, timeline_file, output
        )
        return
    if timeline_file is not None:
        raise ConfigError("--timeline writes a replay's day: give --replay TRACE too")
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


def _replay(
    ctx: Context,
    base: str,
    head: str,
    clusters: tuple[str, ...],
    path: Path,
    engine: str,
    speed: float,
    repeat: int,
    timeline_file: Path | None,
    output: str,
) -> None:
    from auditor.cli.sandbox import _testenv  # the sandbox's machinery, only when replaying
    from auditor.model import ClusterResult, Report
    from auditor.replay import revisions, timeline, trace
    from auditor.sandbox import ensure_built, pki
    from auditor.sandbox.kueuesim import SimulationUnavailable

    if timeline_file is not None:
        timeline.format_of(timeline_file)  # a name it cannot write is refused before the replay
    loaded = trace.read(path)
    cluster = clusters[0] if len(clusters) == 1 else None
    if cluster is None:
        if clusters:
            raise ConfigError("--replay replays one cluster: give one --cluster")
        cluster = loaded.cluster
    revisions.check_speed(speed)
    revisions.check_repeat(repeat)
    root = find_root(ctx.repo_dir or Path.cwd())
    say = ctx.note
    result = None
    if engine == "sim":
        try:
            result = revisions.plan_by_simulation(
                root, base, head, cluster, loaded, testenv=_testenv(ctx), log=say
            )
        except SimulationUnavailable as exc:
            say(f"{exc}; falling back to --engine kueue")
    if result is None:
        pki.require_extra()
        toolchain = ensure_built(_testenv(ctx), log=say)
        result = revisions.plan_by_replay(
            root,
            base,
            head,
            cluster,
            loaded,
            speed=speed,
            toolchain=toolchain,
            repeat=repeat,
            log=say,
        )
    if timeline_file is not None and result.timeline is not None:
        timeline.write(result.timeline, timeline_file)
        say(f"timeline: {timeline_file}")
    report = Report(
        "plan", findings=result.findings(), clusters=[ClusterResult(cluster)], section=result
    )
    finish(report, output)


def _live_replay(
    ctx: Context,
    base: str,
    head: str,
    clusters: tuple[str, ...],
    path: Path,
    engine: str,
    run_for: float,
    access: tuple[str | None, str | None, float],
    timeline_file: Path | None,
    output: str,
) -> None:
    """This change merged now: base and head simulated from the live cluster's queues."""
    import datetime as dt

    from auditor.cli.sandbox import _testenv  # the simulator's build, only when simulating
    from auditor.model import ClusterResult, Report
    from auditor.replay import livestart, revisions, timeline, trace

    if engine != "sim":
        raise ConfigError("--live --replay simulates (--engine sim): a sandbox has no live queues")
    if run_for <= 0:
        raise ConfigError(f"--run-for {run_for:g}: a run time is more than 0 seconds")
    if timeline_file is not None:
        timeline.format_of(timeline_file)
    cluster = clusters[0]
    loaded = trace.read(path)
    root = find_root(ctx.repo_dir or Path.cwd())
    with revision(root, base) as repo:  # the base is what the cluster runs now
        if cluster not in repo.clusters:
            raise ConfigError(f"cluster {cluster} does not exist at {base}")
        profile = repo.cluster(cluster)
    kubeconfig, context, timeout = access
    client = connect(profile, kubeconfig=kubeconfig, context=context, deadline=timeout)
    start = livestart.read_start(
        client, profile.kueue_api, now=dt.datetime.now(dt.UTC), run_for=run_for
    )
    ctx.note(f"{cluster}: {start.held} Workload(s) holding quota, {start.pending} pending")
    result = revisions.plan_by_simulation(
        root, base, head, cluster, loaded, testenv=_testenv(ctx), log=ctx.note, start=start
    )
    if timeline_file is not None and result.timeline is not None:
        timeline.write(result.timeline, timeline_file)
        ctx.note(f"timeline: {timeline_file}")
    report = Report(
        "plan", findings=result.findings(), clusters=[ClusterResult(cluster)], section=result
    )
    finish(report, output)


def _sweep(
    ctx: Context,
    head: str,
    clusters: tuple[str, ...],
    path: Path,
    grid: Path,
    on: str,
    output: str,
    access: tuple[str | None, str | None, float] | None,
) -> None:
    from auditor.cli.sandbox import _testenv  # the simulator's build, only when sweeping
    from auditor.model import ClusterResult, Report
    from auditor.replay import revisions, sim, sweep, trace
    from auditor.sandbox.kueuesim import ensure_sim
    from auditor.speed import parallel

    # the engine first: a missing extra or an unreachable cluster before minutes of building
    with parallel.engine(on) as engine:
        spec = sweep.read_spec(grid)
        loaded = trace.read(path)
        days = [loaded, *(trace.read(p) for p in spec.traces)]
        if len(clusters) > 1:
            raise ConfigError("--sweep simulates one cluster: give one --cluster")
        cluster = clusters[0] if clusters else loaded.cluster
        root = find_root(ctx.repo_dir or Path.cwd())
        with revision(root, head) as repo:
            if cluster not in repo.clusters:
                raise ConfigError(f"cluster {cluster} does not exist at {head}")
            profile = repo.cluster(cluster)
            nodes = None
            if access is not None:  # what the nodes hold, read live rather than the profile's
                kubeconfig, context, timeout = access
                client = connect(profile, kubeconfig=kubeconfig, context=context, deadline=timeout)
                nodes = client.list("v1", "Node")
            binary, release = ensure_sim(_testenv(ctx), profile.kueue_version, log=ctx.note)
            result = sweep.sweep(
                repo,
                cluster,
                days,
                spec,
                binary=binary,
                release=release,
                tenant_of=revisions.tenants_of(repo, cluster),
                within=max(sim.deadline(day) for day in days),
                engine=engine,
                nodes=nodes,
            )
    report = Report(
        "plan", findings=result.findings(), clusters=[ClusterResult(cluster)], section=result
    )
    finish(report, output)


def _job(
    ctx: Context,
    head: str,
    clusters: tuple[str, ...],
    path: Path,
    run_for: float,
    kubeconfig: str | None,
    context: str | None,
    timeout: float,
    output: str,
) -> None:
    import datetime as dt
    import json

    from auditor.cli.sandbox import _testenv  # the simulator's build, only when forecasting
    from auditor.model import ClusterResult, Report
    from auditor.replay import livestart, sim, stamp
    from auditor.replay.trace import Trace
    from auditor.repo import boundaries
    from auditor.sandbox.kueuesim import ensure_sim

    if len(clusters) != 1:
        raise ConfigError("--job forecasts one cluster: give one --cluster")
    if run_for <= 0:
        raise ConfigError(f"--run-for {run_for:g}: a run time is more than 0 seconds")
    cluster = clusters[0]
    job = livestart.job_workload(path, run_for)
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
        [job], [livestart.JOB_NAME]
    )
    document = json.dumps({"objects": objects, **settings, "workloads": start.workloads})
    side = sim.SimSide("job", head, cluster, binary, release, document)
    out, _stderr, _took = sim.run_side(side, sim.deadline(Trace(cluster, {}, [job])))
    result = livestart.forecast(out, start, job, cluster=cluster, release=release)
    inputs = stamp.assumed(run_for=run_for, job=True)
    result.stamp = stamp.stamp(out.get("simulated"), release, config, inputs=inputs)
    report = Report(
        "plan", findings=result.findings(), clusters=[ClusterResult(cluster)], section=result
    )
    finish(report, output)
