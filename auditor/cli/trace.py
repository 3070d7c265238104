"""`kueue-gitops trace`: make a workload trace for `plan replay`, synthetic or recorded."""

from __future__ import annotations

import re
import typing as t
from pathlib import Path

import click

from auditor.cli.options import (
    Context,
    F,
    cluster_access,
    cluster_deadline,
    old_output,
    pass_context,
)
from auditor.errors import ConfigError
from auditor.live.access import connect
from auditor.replay import record as replay_record
from auditor.replay import synthetic
from auditor.replay import trace as replay_trace
from auditor.repo.outfile import write_whole

_SINCE = re.compile(r"^(\d+(?:\.\d+)?)([smhd])$")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def since_seconds(raw: str) -> float:
    found = _SINCE.match(raw.strip())
    if not found:
        raise click.BadParameter(f"{raw!r}: a number and a unit, s m h or d (e.g. 24h)")
    return float(found.group(1)) * _UNIT[found.group(2)]


def tenant_mix(raw: str) -> synthetic.TenantMix:
    """NAMESPACE[/QUEUE]:PRIORITY[+PRIORITY...]:SHARE, e.g. team-a/batch:batch-low:0.6."""
    parts = raw.split(":")
    if len(parts) != 3:
        raise click.BadParameter(f"{raw!r}: NAMESPACE[/QUEUE]:PRIORITY[+PRIORITY...]:SHARE")
    where, classes, share = parts
    namespace, _, queue = where.partition("/")
    try:
        weight = float(share)
    except ValueError:
        raise click.BadParameter(f"{raw!r}: the share {share!r} is not a number") from None
    priorities = dict.fromkeys([c for c in classes.split("+") if c], 1.0)
    return synthetic.TenantMix(namespace, queue, weight, priorities)


@click.group()
def trace() -> None:
    """Workload traces for `plan replay`: generate a synthetic one, or record a cluster's."""


def _trace_file(command: str) -> t.Callable[[F], F]:
    """--out FILE, the trace a command writes (`-o` is a report format: refused with a hint)."""

    def decorate(func: F) -> F:
        func = old_output(command, "--out")(func)
        return click.option(
            "--out",
            "output",
            metavar="FILE",
            type=click.Path(dir_okay=False, path_type=Path),
            required=True,
            help="The trace file to write.",
        )(func)

    return decorate


@trace.command()
@click.option("--cluster", required=True, metavar="C", help="The repository cluster it is for.")
@click.option("--workloads", default=40, show_default=True, type=click.IntRange(min=1))
@click.option("--hours", default=1.0, show_default=True, type=click.FloatRange(min=0.01))
@click.option("--seed", default=1, show_default=True, type=int)
@click.option("--bursts", default=2, show_default=True, type=click.IntRange(min=0))
@click.option(
    "--median-run",
    default=600.0,
    show_default=True,
    type=click.FloatRange(min=1),
    help="Median run time of a Workload, in seconds.",
)
@click.option(
    "--tenant",
    "tenants",
    multiple=True,
    metavar="NS[/QUEUE]:PRIO[+PRIO]:SHARE",
    help="A tenant's part of the work (repeatable): its namespace and a LocalQueue of it "
    "(default: every LocalQueue the repository gives the namespace, the share split among them); "
    "default: every tenant LocalQueue of the cluster, equal shares, the priority classes its "
    "profile approves.",
)
@_trace_file("trace generate")
@pass_context
def generate(
    ctx: Context,
    cluster: str,
    workloads: int,
    hours: float,
    seed: int,
    bursts: int,
    median_run: float,
    tenants: tuple[str, ...],
    output: Path,
) -> None:
    """A synthetic trace: diurnal load, bursts, a mix of priorities; same seed, same trace."""
    repo = ctx.repository()
    if cluster not in repo.clusters:
        raise ConfigError(f"no cluster {cluster} in the repository")
    mixes = (
        synthetic.placed(
            [tenant_mix(t) for t in tenants], synthetic.local_queues(repo, cluster), cluster
        )
        if tenants
        else synthetic.mixes_from(repo, cluster)
    )
    made = synthetic.generate(
        cluster, mixes, workloads=workloads, hours=hours, seed=seed, bursts=bursts,
        median_run=median_run,
    )  # fmt: skip
    replay_trace.write(made, output)
    click.echo(f"{output}: {len(made.workloads)} Workloads over {hours:g}h (seed {seed})")


@trace.command()
@click.option("--cluster", required=True, metavar="C", help="The repository cluster to read.")
@click.option("--since", default="24h", show_default=True, help="The window: 30m, 24h, 7d ...")
@_trace_file("trace record")
@cluster_access
@cluster_deadline
@pass_context
def record(
    ctx: Context,
    cluster: str,
    since: str,
    output: Path,
    kubeconfig: str | None,
    context: str | None,
    timeout: float,
) -> None:
    """Record a live cluster's Workloads created in the window as a trace (one LIST).

    Run time is Admitted → Finished from each Workload's conditions; one still running gets its
    run time so far (flagged stillRunning); one never admitted is left out (counted)."""
    profile = ctx.repository().cluster(cluster)
    live = connect(profile, kubeconfig=kubeconfig, context=context, deadline=timeout)
    made = replay_record.record(cluster, live, profile.kueue_api, since=since_seconds(since))
    replay_trace.write(made, output)
    click.echo(
        f"{output}: {len(made.workloads)} Workloads over {since} "
        f"({made.recorded.get('leftOut', 0)} never admitted, left out)"
    )


@trace.command("import")
@click.option(
    "--kueue-harness",
    "harness_name",
    required=True,
    metavar="NAME",
    help="A configuration of Kueue's scheduler performance harness "
    "(test/performance/scheduler/configs/NAME in the pinned Kueue module): baseline, "
    "large-scale ...",
)
@click.option(
    "--kueue-version",
    metavar="V",
    help="The pinned Kueue release whose harness to read (default: the newest pinned).",
)
@click.option("--cluster", default=None, metavar="C", help="The cluster's name [kueue-NAME].")
@click.option(
    "--out-dir",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="An empty or new folder: the estate (clusters/, tenants/) and trace.json go there.",
)
@pass_context
def import_(
    ctx: Context,
    harness_name: str,
    kueue_version: str | None,
    cluster: str | None,
    out_dir: Path,
) -> None:
    """Kueue's own performance harness as an estate and a trace for `plan replay`.

    Reads the configuration's generator.yaml (cohorts, ClusterQueues, quotas, Workload classes
    and their timing) from the pinned Kueue module and writes one cluster (its profile, flavor,
    priority classes, cohorts and ClusterQueues), a tenant per cohort (Namespaces and
    LocalQueues) and the trace of its Workloads. The harness's expectations (rangespec.yaml) are
    printed."""
    import datetime as dt

    from auditor.onboard import harness as onboard_harness
    from auditor.replay import harness as replay_harness
    from auditor.repo import boundaries
    from auditor.repo.layout import Repository
    from auditor.sandbox import harness, pins, releases

    if out_dir.exists() and any(out_dir.iterdir()):
        raise ConfigError(f"{out_dir} is not empty: trace import writes a new estate")
    module, release = releases.source(pins.testenv(ctx.repo_dir or Path.cwd()), kueue_version)
    found = harness.load(module, harness_name, release)
    name = cluster or f"kueue-{harness_name}"
    files = onboard_harness.estate(found, name, dt.datetime.now(dt.UTC).date())
    for relative, text in files.items():
        write_whole(out_dir / relative, text, what="the estate")
    repo = Repository.open(out_dir)  # its admission policies, as `generate policies` writes them
    made_policies = boundaries.boundaries(
        repo.cluster(name), repo.tenants, repo.load([name]).for_cluster(name)
    )
    policies = boundaries.render(name, made_policies)
    write_whole(out_dir / boundaries.policy_path(name), policies, what="the admission policies")
    made = replay_harness.trace(found, name)
    replay_trace.write(made, out_dir / "trace.json")
    counts = ", ".join(f"{k} {v}" for k, v in found.expected_counts().items())
    click.echo(
        f"{out_dir}: cluster {name} from Kueue {release}'s harness {harness_name!r} "
        f"({found.folder}): {len(found.queues)} ClusterQueues, {len(made.workloads)} Workloads "
        f"({counts}) over {made.seconds:g} s in trace.json"
    )
    if found.rangespec:
        click.echo(f"expected (rangespec.yaml): {found.rangespec}")
