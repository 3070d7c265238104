"""`kueue-gitops plan`: what a change between two git revisions does, in cluster terms."""

from __future__ import annotations

import json
import sys
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
    resolve_format,
)
from auditor.errors import ConfigError
from auditor.live.access import connect
from auditor.plan import live as plan_live
from auditor.plan.offline import build
from auditor.repo.gitsource import revision
from auditor.repo.layout import find_root


@click.command()
@click.option("--base", required=True, metavar="REV", help="The revision the change starts from.")
@click.option("--head", default="HEAD", show_default=True, metavar="REV", help="The change.")
@click.option("--cluster", "clusters", multiple=True, metavar="C", help="Only these clusters.")
@cluster_access
@cluster_deadline
@click.option(
    "--live/--offline",
    default=False,
    show_default=True,
    help="Weigh quota cuts and removals against the clusters' live usage and Workloads.",
)
@click.option(
    "--replay",
    "replay_trace",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="TRACE",
    help="Replay this workload trace (`kueue-gitops trace`) through the real Kueue on a sandbox "
    "of --base and of --head, and compare waits, borrowing and preemptions.",
)
@click.option(
    "--speed",
    default=30.0,
    show_default=True,
    type=float,
    help="With --replay: how much faster than the trace to replay (at most 60).",
)
@click.option(
    "--repeat",
    default=1,
    show_default=True,
    type=int,
    help="With --replay: replay each side this many times (at most 5) and flag a wait only when "
    "the head's replays all wait longer than the base's.",
)
@output_format
@pass_context
def plan(
    ctx: Context,
    base: str,
    head: str,
    clusters: tuple[str, ...],
    kubeconfig: str | None,
    context: str | None,
    timeout: float,
    live: bool,
    replay_trace: Path | None,
    speed: float,
    repeat: int,
    output: str,
) -> None:
    """Quota, cohorts, admission, RBAC powers and objects changed from --base to --head.

    Reads both revisions from git without touching the working tree. A change to a field the API
    server cannot change on an existing object is an error. With --live, a quota cut
    below what is in use warns which Workloads it exposes, and removing a queue or a namespace's
    admission while Workloads are pending or admitted there is an error.

    With --replay TRACE and one --cluster, the trace's Workloads are submitted to a fresh
    sandbox of each revision (the real Kueue, kwok's simulated nodes) at --speed, and each
    tenant's admission waits, GPU-hours, borrowing and preemptions are compared: exit 1 when a
    tenant's p95 wait rises past the threshold or the head never admits work the base did.
    """
    if replay_trace is not None:
        _replay(ctx, base, head, clusters, replay_trace, speed, repeat, output)
        return
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
    speed: float,
    repeat: int,
    output: str,
) -> None:
    from auditor.cli.sandbox import _testenv  # the sandbox's machinery, only when replaying
    from auditor.replay import compare, trace
    from auditor.report import replay as report_replay
    from auditor.sandbox import ensure_built, pki

    output = resolve_format(output)
    if output not in ("text", "json", "markdown"):
        raise click.UsageError(f"--replay reports as text, json or markdown, not {output}")
    loaded = trace.read(path)
    cluster = clusters[0] if len(clusters) == 1 else None
    if cluster is None:
        if clusters:
            raise ConfigError("--replay replays one cluster: give one --cluster")
        cluster = loaded.cluster
    compare.check_speed(speed)
    compare.check_repeat(repeat)
    root = find_root(ctx.repo_dir or Path.cwd())
    say = ctx.note
    pki.require_extra()
    toolchain = ensure_built(_testenv(ctx), log=say)
    result = compare.plan_by_replay(
        root, base, head, cluster, loaded, speed=speed, toolchain=toolchain, repeat=repeat, log=say
    )
    out = sys.stdout
    if output == "json":
        json.dump(result.to_json(), out, indent=2)
        out.write("\n")
    else:
        (report_replay.markdown if output == "markdown" else report_replay.text)(result, out)
    click.get_current_context().exit(result.exit_code)
