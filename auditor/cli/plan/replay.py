"""`kueue-gitops plan replay TRACE`: a workload trace through each revision's Kueue, compared."""

from __future__ import annotations

import typing as t
from dataclasses import dataclass
from pathlib import Path

import click
from click.core import ParameterSource

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
    from auditor.replay.comparison import Comparison


@dataclass(frozen=True)
class Asked:
    """The replay's options, as given (click's names)."""

    base: str
    head: str
    cluster: str | None
    engine: str
    speed: float
    repeat: int
    timeline_file: Path | None
    live: bool
    run_for: float
    kubeconfig: str | None
    context: str | None
    timeout: float
    output: str


@click.command(cls=options.Verb)
@options.path_argument("trace_file", "TRACE")
@options.base
@options.head()
@options.cluster("The cluster to replay (default: the trace's).")
@click.option(
    "--engine",
    type=click.Choice(["sim", "kueue"]),
    default="sim",
    show_default=True,
    help="sim runs Kueue's own scheduler on a simulated clock (deterministic, a day in "
    "seconds); kueue runs the real Kueue on a sandbox in compressed real time.",
)
@click.option(
    "--speed",
    default=30.0,
    show_default=True,
    type=float,
    help="With the real Kueue: how much faster than the trace to replay (at most 60).",
)
@click.option(
    "--repeat",
    default=1,
    show_default=True,
    type=int,
    help="With the real Kueue: replay each side this many times (at most 5) and flag a wait "
    "only when the head's replays all wait longer than the base's.",
)
@click.option(
    "--timeline",
    "timeline_file",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    metavar="FILE",
    help="Also write the simulated day, per LocalQueue and side, to FILE (.csv or .jsonl): "
    "time, side, queue, tenant, running, pending, admitted, preempted, gpus.",
)
@options.live(
    "Start both revisions from the --cluster's queues as they are now (its admitted and "
    "pending Workloads, read once): this change merged now (simulated only)."
)
@options.run_for(
    "With --live: how long each Workload already on the cluster runs, from its admission."
)
@cluster_access
@cluster_deadline
@output_format
@renderers_mode
@pass_context
def replay(ctx: Context, /, trace_file: Path, **given: t.Any) -> None:  # the options: Asked
    """A workload trace replayed on --base and on --head, compared.

    TRACE is a workload trace (`kueue-gitops trace`). Its Workloads go through each revision's
    Kueue: by default (--engine sim) Kueue's own scheduler on a simulated clock, or (--engine
    kueue) the real Kueue on a fresh sandbox at --speed; each tenant's admission waits,
    GPU-hours, borrowing and preemptions are compared: exit 1 when a tenant's p95 wait rises past
    the threshold, the head never admits work the base did, or it preempts in a loop.

    With --live, both revisions start from the cluster's queues as they are now and the trace's
    Workloads arrive from now on (docs/replay.md).
    """
    asked = Asked(**given)
    if asked.live:
        _refuse_for_live(asked)
        result, cluster = _from_now(ctx, trace_file, asked)
    else:
        _refuse_given("run_for", "is for the live cluster's Workloads: give --live too")
        result, cluster = _from_empty(ctx, trace_file, asked)
    _write_timeline(ctx, result, asked.timeline_file)
    options.report(cluster, result, asked.output)


def _refuse_given(name: str, why: str) -> None:
    """An option given on the line that this run would not use: refused, not ignored."""
    if click.get_current_context().get_parameter_source(name) == ParameterSource.COMMANDLINE:
        raise click.UsageError(f"--{name.replace('_', '-')} {why}")


def _refuse_for_live(asked: Asked) -> None:
    if asked.engine != "sim":
        raise click.UsageError("--live simulates (--engine sim): a sandbox has no live queues")
    for name in ("speed", "repeat"):
        _refuse_given(name, "paces the real Kueue's replay; --live is simulated: leave it out")
    if asked.cluster is None:
        raise click.UsageError(
            "--live starts both revisions from one live cluster's queues: give --cluster"
        )


def _write_timeline(ctx: Context, result: Comparison, path: Path | None) -> None:
    from auditor.replay import timeline

    if path is not None and result.timeline is not None:
        timeline.write(result.timeline, path)
        ctx.note(f"timeline: {path}")


def _from_empty(ctx: Context, path: Path, asked: Asked) -> tuple[Comparison, str]:
    """Both revisions from empty queues: simulated, else (or asked) the real Kueue."""
    from auditor.cli.sandbox import _testenv  # the sandbox's machinery, only when replaying
    from auditor.replay import revisions, timeline, trace
    from auditor.repo.root import find_root
    from auditor.sandbox import ensure_built, pki
    from auditor.sandbox.kueuesim import SimulationUnavailable

    if asked.timeline_file is not None:
        timeline.format_of(asked.timeline_file)  # a name it cannot write: refused first
    loaded = trace.read(path)
    cluster = asked.cluster or loaded.cluster
    speed, repeat = asked.speed, asked.repeat
    revisions.check_speed(speed)
    revisions.check_repeat(repeat)
    root = find_root(ctx.repo_dir or Path.cwd())
    sides = (root, asked.base, asked.head, cluster, loaded)
    if asked.engine == "sim":
        try:
            simulated = revisions.plan_by_simulation(*sides, testenv=_testenv(ctx), log=ctx.note)
            return simulated, cluster
        except SimulationUnavailable as exc:
            ctx.note(f"{exc}; falling back to --engine kueue")
    pki.require_extra()
    toolchain = ensure_built(_testenv(ctx), log=ctx.note)
    result = revisions.plan_by_replay(
        *sides, speed=speed, toolchain=toolchain, repeat=repeat, log=ctx.note
    )
    return result, cluster


def _from_now(ctx: Context, path: Path, asked: Asked) -> tuple[Comparison, str]:
    """This change merged now: base and head simulated from the live cluster's queues."""
    import datetime as dt

    from auditor.cli.sandbox import _testenv  # the simulator's build, only when simulating
    from auditor.live.access import connect
    from auditor.replay import livestart, revisions, timeline, trace
    from auditor.repo.gitsource import revision
    from auditor.repo.root import find_root

    base, cluster, context = asked.base, asked.cluster, asked.context
    assert cluster is not None  # _refuse_for_live
    if asked.timeline_file is not None:
        timeline.format_of(asked.timeline_file)
    loaded = trace.read(path)
    root = find_root(ctx.repo_dir or Path.cwd())
    with revision(root, base) as repo:  # the base is what the cluster runs now
        if cluster not in repo.clusters:
            raise ConfigError(f"cluster {cluster} does not exist at {base}")
        profile = repo.cluster(cluster)
    client = connect(profile, kubeconfig=asked.kubeconfig, context=context, deadline=asked.timeout)
    now = dt.datetime.now(dt.UTC)
    start = livestart.read_start(client, profile.kueue_api, now=now, run_for=asked.run_for)
    ctx.note(f"{cluster}: {start.held} Workload(s) holding quota, {start.pending} pending")
    result = revisions.plan_by_simulation(
        root, base, asked.head, cluster, loaded, testenv=_testenv(ctx), log=ctx.note,
        start=start,
    )  # fmt: skip
    return result, cluster
