"""`kueue-gitops`: one console script, click-based, exit codes the same for every command.

Exit codes: 0 clean; 1 findings (violations or drift); 2 usage or configuration error;
3 could not complete (a cluster unreachable, a LIST forbidden, a timeout).
"""

from __future__ import annotations

import importlib
import typing as t
from pathlib import Path

import click

from auditor.cli.options import Context
from auditor.errors import AuditorError

EPILOG = (
    "Exit codes: 0 clean, 1 findings, 2 usage or configuration error, "
    "3 could not complete (never reported as clean)."
)

# Each command lives in its own module and is imported only when it runs, so `validate` does
# not pay for the Kubernetes client or deepdiff (about a second) that other commands need.
COMMANDS = {
    "validate": "auditor.cli.validate:validate",
    "schemas": "auditor.cli.validate:schemas",
    "drift": "auditor.cli.drift:drift",
    "plan": "auditor.cli.plan:plan",
    "codeowners": "auditor.cli.codeowners:codeowners",
    "status": "auditor.cli.status:status",
    "hold": "auditor.cli.runbook:hold",
    "resume": "auditor.cli.runbook:resume",
    "export-workloads": "auditor.cli.runbook:export_workloads",
    "verify": "auditor.cli.verify:verify",
    "sandbox": "auditor.cli.sandbox:sandbox",
    "rules": "auditor.cli.rules:rules",
    "explain": "auditor.cli.rules:explain",
    "github": "auditor.cli.github:github",
}


class AuditorGroup(click.Group):
    """Loads commands on demand; turns our errors into one `Error:` line and their exit code."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, _, attr = target.partition(":")
        return t.cast(click.Command, getattr(importlib.import_module(module), attr))

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
    ctx.ensure_object(Context).repo_dir = repo_dir  # keeps what a caller passed in obj


def main() -> None:
    cli(prog_name="kueue-gitops")
