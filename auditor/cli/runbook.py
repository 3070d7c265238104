"""`kueue-gitops hold`, `resume` and `export-workloads`: the stop-admission runbook."""

from __future__ import annotations

import typing as t
from pathlib import Path

import click

from auditor.cli.options import (
    Context,
    cluster_access,
    cluster_deadline,
    finish,
    old_output,
    output_format,
    pass_context,
)
from auditor.errors import ConfigError
from auditor.live.access import connect
from auditor.live.kube import KubeCluster
from auditor.model import ClusterResult, Finding, Report
from auditor.repo.layout import Repository
from auditor.runbook import dryrun
from auditor.runbook import export as runbook_export
from auditor.runbook import hold as runbook_hold


def _live(
    repo: Repository,
    cluster_queue: str,
    cluster: str | None,
    kubeconfig: str | None,
    context: str | None,
    timeout: float,
) -> dict[str, KubeCluster]:
    names = sorted({t.cluster for t in runbook_hold.targets(repo, cluster_queue, cluster)})
    if context and len(names) > 1:
        raise ConfigError(
            f"--context reaches one cluster but {cluster_queue} is on {', '.join(names)}; "
            "add --cluster"
        )
    return {
        name: connect(repo.cluster(name), kubeconfig=kubeconfig, context=context, deadline=timeout)
        for name in names
    }


def _runbook_command(hold: bool) -> click.Command:
    verb = "hold" if hold else "resume"

    @click.command(name=verb)
    @click.argument("cluster_queue", metavar="CQ")
    @click.option("--cluster", metavar="NAME", help="Only this cluster (default: every one).")
    @click.option(
        "--apply",
        "apply_live",
        is_flag=True,
        help="Also patch the live ClusterQueue now, before Argo CD syncs the commit: on every "
        "cluster or none (each is checked for access first; a failed patch undoes the others).",
    )
    @click.option("--branch", metavar="NAME", help=f"Branch to create (default: {verb}/CQ-TIME).")
    @cluster_access
    @cluster_deadline
    @output_format
    @pass_context
    def command(
        ctx: Context,
        cluster_queue: str,
        cluster: str | None,
        apply_live: bool,
        branch: str | None,
        kubeconfig: str | None,
        context: str | None,
        timeout: float,
        output: str,
        force: bool = False,
    ) -> None:
        repo = ctx.repository()
        live = (
            _live(repo, cluster_queue, cluster, kubeconfig, context, timeout)
            if apply_live
            else None
        )
        check: t.Callable[[runbook_hold.HoldOutcome], list[Finding]] | None = None
        if not hold and force:
            check = _forced
        elif not hold:
            reach = live or _live(repo, cluster_queue, cluster, kubeconfig, context, timeout)

            def check(outcome: runbook_hold.HoldOutcome) -> list[Finding]:
                changed = sorted({target.cluster for target in outcome.changed})
                found = dryrun.refusals(repo, cluster_queue, {n: reach[n] for n in changed})
                outcome.checked = [] if found else changed
                return found

        outcome = runbook_hold.run(
            repo,
            cluster_queue,
            hold=hold,
            cluster=cluster,
            live=live,
            branch=branch,
            before_change=check,
        )
        clusters = sorted(
            {t.cluster for t in outcome.changed} | {t.cluster for t, _ in outcome.unchanged}
        )
        report = Report(
            verb,
            findings=outcome.refused,
            clusters=[ClusterResult(name) for name in clusters],
            section=outcome,
        )
        finish(report, output)

    command.help = (
        "Stop admission to ClusterQueue CQ through the repository (stopPolicy: Hold).\n\n"
        "Edits one line per cluster file, preserving comments and formatting, and commits it "
        "on a new branch. Admitted Workloads keep running; nothing is deleted."
        if hold
        else "Resume admission to ClusterQueue CQ: undo `hold` in the repository.\n\n"
        "Removes the line `hold` added (the file is then byte-for-byte as before), on a new "
        "branch with a commit. Use --apply if the hold was applied live.\n\n"
        "First, as the runbook says, every object of each cluster's folder, as it will be once "
        "resumed, must pass a server-side dry-run on that cluster (each refusal is a finding, "
        "exit 1, nothing committed); --force skips it, and the commit message says so."
    )
    if not hold:
        click.option(
            "--force",
            is_flag=True,
            help="Resume without the server-side dry-run of the cluster's folder (said in the "
            "commit message).",
        )(command)
    return command


def _forced(outcome: runbook_hold.HoldOutcome) -> list[Finding]:
    outcome.forced = True
    return []


hold = _runbook_command(hold=True)
resume = _runbook_command(hold=False)


@click.command(name="export-workloads")
@click.option("--cluster", required=True, metavar="NAME", help="Repo cluster to read.")
@click.option(
    "--out-dir",
    "output_dir",
    metavar="DIR",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="Folder for the timestamped JSON file.",
)
@old_output("export-workloads", "--out-dir", "--output-dir")
@cluster_access
@cluster_deadline
@pass_context
def export_workloads(
    ctx: Context,
    cluster: str,
    output_dir: Path,
    kubeconfig: str | None,
    context: str | None,
    timeout: float,
) -> None:
    """Snapshot every Workload's state, and a preemption audit, before a rollback.

    Writes workloads-CLUSTER-TIME.json: queue, priority, conditions, admission, evictions and
    preemption of each Workload, and each preemption's victim, preemptor priority and reason.
    """
    profile = ctx.repository().cluster(cluster)
    live = connect(profile, kubeconfig=kubeconfig, context=context, deadline=timeout)
    snap = runbook_export.snapshot(live, profile.kueue_api)
    path = runbook_export.write(snap, output_dir)
    click.echo(f"{path}: {runbook_export.summary(snap)}")
