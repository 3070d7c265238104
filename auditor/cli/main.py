"""`kueue-gitops`: one console script, click-based, exit codes the same for every command.

Exit codes: 0 clean; 1 findings (violations or drift); 2 usage or configuration error;
3 could not complete (a cluster unreachable, a LIST forbidden, a deadline passed, output that
could not be written, or a bug: a crash is 3, never 1, with the report marked incomplete where
the command writes one).
"""

from __future__ import annotations

import difflib
import errno
import importlib
import signal
import sys
import traceback
import typing as t
from pathlib import Path

import click

from auditor.cli import examples, signals
from auditor.cli.options import (
    QUIET_HELP,
    REPO_ENV,
    REPO_HELP,
    VERBOSE_HELP,
    Context,
    repo_anywhere,
    set_verbosity,
)
from auditor.errors import AuditorError, internal_error
from auditor.render import mode
from auditor.repo import outfile

EPILOG = (
    "Exit codes: 0 clean, 1 findings, 2 usage or configuration error, "
    "3 could not complete (never reported as clean; a crash is 3, never 1)."
)

# Each command lives in its own module and is imported only when it runs, so `validate` does
# not pay for the Kubernetes client or deepdiff (about a second) that other commands need.
COMMANDS = {
    "validate": "auditor.cli.validate:validate",
    "schemas": "auditor.cli.validate:schemas",
    "lsp": "auditor.cli.lsp:lsp",
    "drift": "auditor.cli.drift:drift",
    "plan": "auditor.cli.plan.group:plan",
    "codeowners": "auditor.cli.codeowners:codeowners",
    "generate": "auditor.cli.generate:generate",
    "status": "auditor.cli.status:status",
    "hold": "auditor.cli.runbook:hold",
    "resume": "auditor.cli.runbook:resume",
    "export-workloads": "auditor.cli.runbook:export_workloads",
    "preemptions": "auditor.cli.preemptions:preemptions_command",
    "upgrade-check": "auditor.cli.upgrade:upgrade_check",
    "verify": "auditor.cli.verify:verify",
    "sandbox": "auditor.cli.sandbox:sandbox",
    "rules": "auditor.cli.rules:rules",
    "explain": "auditor.cli.rules:explain",
    "github": "auditor.cli.github:github",
    "tenant": "auditor.cli.onboard:tenant",
    "cluster": "auditor.cli.onboard:cluster_group",
    "init": "auditor.cli.onboard:init",
    "import": "auditor.cli.importing:import_command",
    "trace": "auditor.cli.trace:trace",
    "cache": "auditor.cli.cache:cache_group",
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
        command = t.cast(click.Command, getattr(importlib.import_module(module), attr))
        examples.decorate(command, cmd_name)
        return repo_anywhere(command)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = click.utils.make_str(args[0]) if args else ""
        if args and not name.startswith("-") and self.get_command(ctx, name) is None:
            close = difflib.get_close_matches(name, COMMANDS, n=3, cutoff=0.6)
            hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            ctx.fail(f"No such command {name!r}.{hint} (`kueue-gitops --help` lists them)")
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: click.Context) -> t.Any:
        try:
            return super().invoke(ctx)
        except AuditorError as exc:
            click.echo(f"Error: {exc}", err=True)
            ctx.exit(exc.exit_code)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM: 130 or 143, never 1 ("findings")
            why = exc if isinstance(exc, signals.Interrupted) else signals.Interrupted(2)
            state = ctx.find_object(Context) or Context()
            if not signals.reported():
                state.write_incomplete(
                    f"{why}: the run did not finish, and what it read is not reported"
                )
            click.echo(f"Error: {why}; the report is incomplete", err=True)
            if signals.installed():
                signals.leave(why.exit_code)
            ctx.exit(why.exit_code)
        except Exception as exc:  # a bug: exit 3 ("could not complete"), never 1 ("findings")
            state = ctx.find_object(Context) or Context()
            message = _not_written(exc) or internal_error(exc)
            if state.verbosity > 0:
                click.echo("".join(traceback.format_exception(exc)).rstrip(), err=True)
            state.write_incomplete(message)
            click.echo(f"Error: {message}", err=True)
            ctx.exit(3)


@click.group(
    cls=AuditorGroup,
    epilog=EPILOG,
    context_settings={"help_option_names": ["-h", "--help"], "auto_envvar_prefix": "KUEUE_GITOPS"},
)
@click.option(
    "--repo",
    "repo_dir",
    type=click.Path(file_okay=False, path_type=Path),
    envvar=REPO_ENV,
    metavar="DIR",
    help=REPO_HELP,
)
@click.option("-v", "--verbose", "verbose", count=True, help=VERBOSE_HELP)
@click.option("-q", "--quiet", is_flag=True, help=QUIET_HELP)
@click.version_option(package_name="kueue-gitops")
@click.pass_context
def cli(ctx: click.Context, repo_dir: Path | None, verbose: int, quiet: bool) -> None:
    """Validate, audit and operate a GitOps repository of Kueue quota."""
    signals.starting()
    mode.choose(None)  # a command's --renderers holds for that run alone (several in one process)
    state = ctx.ensure_object(Context)  # keeps what a caller passed in obj
    state.repo_dir = repo_dir
    state.verbose, state.quiet = 0, False
    set_verbosity(state, verbose, quiet)


# An OSError no bug of ours raises: the disk or a quota is full, a file past its size limit,
# the reader of a pipe gone. Each write of ours that can meet it says what it wrote
# (auditor/repo/outfile.py); this is any other (a line on stdout, a note).
_FULL_OR_CLOSED = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EPIPE)


def _not_written(exc: Exception) -> str | None:
    if not isinstance(exc, OSError) or exc.errno not in _FULL_OR_CLOSED:
        return None
    return f"could not write{f' {exc.filename}' if exc.filename else ''}: {exc.strerror}"


def main() -> None:
    signals.install()
    outfile.hold_closed_stdout()
    try:
        cli(prog_name="kueue-gitops")
    except SystemExit as done:
        code = signals.exit_code()  # a command that caught the signal and reported anyway
        if code is not None:
            signals.leave(code)
        _flushed(done)
        raise
    except KeyboardInterrupt:  # before or after a command ran (parsing its options)
        signals.leave(signals.exit_code() or 128 + signal.SIGINT)


def _flushed(done: SystemExit) -> None:
    """What stdout still holds, written now: the interpreter's last flush failing would print
    its own message and exit 120. A run that ended clean or with findings is incomplete (3)
    when its output was not written; one that failed already keeps its one error line."""
    try:
        outfile.flush_stdout()
    except outfile.OutputError as exc:
        if done.code in (None, 0, 1):
            sys.stderr.write(f"Error: {exc}\n")
            done.code = exc.exit_code
