"""`kueue-gitops`: one console script, click-based, exit codes the same for every command.

Exit codes: 0 clean; 1 findings (violations or drift); 2 usage or configuration error;
3 could not complete (a cluster unreachable, a LIST forbidden, a timeout).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from auditor import status as live_status
from auditor.cli.options import Context, cluster_access, pass_context
from auditor.cli.sandbox import sandbox
from auditor.errors import AuditorError, ConfigError
from auditor.live.access import connect

EPILOG = ("Exit codes: 0 clean, 1 findings, 2 usage or configuration error, "
          "3 could not complete (never reported as clean).")


@click.group(epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"],
                                              "auto_envvar_prefix": "KUEUE_GITOPS"})
@click.option("--repo", "repo_dir", type=click.Path(file_okay=False, path_type=Path),
              help="The kueue-gitops repository (default: the one holding the current folder).")
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


def main() -> None:
    """Run the CLI, turning our own errors into a message and their documented exit code."""
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(2)
    except ConfigError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(2)
    except AuditorError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(exc.exit_code)
