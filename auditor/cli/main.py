"""`kueue-gitops`: one console script, click-based, exit codes the same for every command.

Exit codes: 0 clean; 1 findings (violations or drift); 2 usage or configuration error;
3 could not complete (a cluster unreachable, a LIST forbidden, a timeout).
"""

from __future__ import annotations

import typing as t
from pathlib import Path

import click

from auditor import status as live_status
from auditor.cli.codeowners import codeowners
from auditor.cli.drift import drift
from auditor.cli.options import Context, cluster_access, pass_context
from auditor.cli.plan import plan
from auditor.cli.runbook import export_workloads, hold, resume
from auditor.cli.sandbox import sandbox
from auditor.cli.validate import schemas, validate
from auditor.cli.verify import verify
from auditor.errors import AuditorError
from auditor.live.access import connect

EPILOG = (
    "Exit codes: 0 clean, 1 findings, 2 usage or configuration error, "
    "3 could not complete (never reported as clean)."
)


class AuditorGroup(click.Group):
    """Turns our own errors into one `Error:` line and their documented exit code."""

    def invoke(self, ctx: click.Context) -> t.Any:
        try:
            return super().invoke(ctx)
        except AuditorError as exc:
            click.echo(f"Error: {exc}", err=True)
            ctx.exit(exc.exit_code)


@click.group(
    cls=AuditorGroup,
    epilog=EPILOG,
    context_settings={"help_option_names": ["-h", "--help"], "auto_envvar_prefix": "KUEUE_GITOPS"},
)
@click.option(
    "--repo",
    "repo_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="The kueue-gitops repository (default: the one holding the current folder).",
)
@click.version_option(package_name="kueue-gitops")
@click.pass_context
def cli(ctx: click.Context, repo_dir: Path | None) -> None:
    """Validate, audit and operate a GitOps repository of Kueue quota."""
    ctx.obj = Context(repo_dir)


@cli.command()
@click.option("--cluster", "cluster", required=True, help="Repo cluster to show.")
@cluster_access
@pass_context
def status(ctx: Context, cluster: str, kubeconfig: str | None, context: str | None) -> None:
    """Show a cluster's live ClusterQueues, LocalQueues and namespaces' admission labels."""
    profile = ctx.repository().cluster(cluster)
    live = live_status.read(connect(profile, kubeconfig=kubeconfig, context=context))
    click.echo(live_status.render_text(live, profile))


cli.add_command(sandbox)
cli.add_command(codeowners)
cli.add_command(validate)
cli.add_command(schemas)
cli.add_command(drift)
cli.add_command(hold)
cli.add_command(resume)
cli.add_command(export_workloads)
cli.add_command(plan)
cli.add_command(verify)


def main() -> None:
    cli(prog_name="kueue-gitops")
