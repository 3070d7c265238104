"""Options shared by the commands, and the context object that carries them."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import logging
import os
import typing as t
from dataclasses import dataclass
from pathlib import Path

import click

from auditor.cli import signals
from auditor.render import mode
from auditor.repo.outfile import OutputError, to_stdout
from auditor.report import REPORTER_BY_NAME

# What a command needs only once it runs (the repository, the baseline) is imported there: a
# run the resident validate answers loads neither (auditor/lsp/ask.py).
if t.TYPE_CHECKING:
    from auditor.github.api import GitHubApi
    from auditor.model import Report
    from auditor.repo import baseline
    from auditor.repo.layout import Repository


@dataclass
class Context:
    repo_dir: Path | None = None
    # How `kueue-gitops github` reaches GitHub: None is the REST API; tests pass a fake in obj.
    github_api: t.Callable[[], GitHubApi] | None = None
    verbosity: int = 0  # -1 with -q, 1 and up with -v
    verbose: int = 0  # -v given this many times, before the command or after it
    quiet: bool = False
    # The running command's click context, when it writes a report (-o): the crash guard
    # writes an incomplete report in that format.
    reporting: click.Context | None = None

    def repository(self) -> Repository:
        from auditor.repo.layout import Repository

        return Repository.open(self.repo_dir)

    def note(self, message: str) -> None:
        """A remark beside the report, on stderr; -q silences it."""
        if self.verbosity >= 0:
            click.echo(f"note: {message}", err=True)

    def detail(self, message: str) -> None:
        """A remark every run would repeat (noise in a pre-commit hook): shown with -v only."""
        if self.verbosity > 0:
            click.echo(f"note: {message}", err=True)

    def write_incomplete(self, error: str) -> None:
        """After a crash: the report the command would have written, marked incomplete."""
        if self.reporting is None:
            return
        command, params = self.reporting.command, self.reporting.params
        # `plan diff` reports as `plan`; a group's command as its words (`sandbox apply`)
        words = self.reporting.command_path.partition(" ")[2]
        name = getattr(command, "report_name", None) or words
        named = params.get("clusters") or [params[k] for k in ("cluster",) if params.get(k)]
        from auditor.model import ClusterResult, Report

        report = Report(
            str(name),
            clusters=[ClusterResult(c, "incomplete", [error]) for c in named or ["(all)"]],
        )
        with contextlib.suppress(OutputError):  # stdout is what failed: the error says so
            emit(report, str(params.get("output") or "auto"))


pass_context = click.make_pass_decorator(Context)

REPO_ENV = "KUEUE_GITOPS_REPO"
REPO_HELP = (
    f"The kueue-gitops repository (default: ${REPO_ENV}, else the one holding the current "
    "folder); accepted before or after the command."
)


def _set_repo(ctx: click.Context, _param: click.Parameter, value: Path | None) -> None:
    state = ctx.find_object(Context)
    if value is not None and state is not None:
        state.repo_dir = value


VERBOSE_HELP = "Say more: the traceback of an internal error, and the tool's debug log."
QUIET_HELP = "Say less: no notes, only the report and errors."


def set_verbosity(state: Context, verbose: int = 0, quiet: bool = False) -> None:
    """Add -v and -q where they were given (before or after the command): the tool's log on
    stderr with -v; -q drops the notes unless -v is given too."""
    state.verbose += verbose
    state.quiet |= quiet
    state.verbosity = -1 if state.quiet and not state.verbose else state.verbose
    log = logging.getLogger("auditor")
    log.setLevel(logging.DEBUG if state.verbose else logging.WARNING)
    if state.verbose and _LOG_TO_STDERR not in log.handlers:
        log.addHandler(_LOG_TO_STDERR)
    elif not state.verbose:
        log.removeHandler(_LOG_TO_STDERR)


class _Stderr(logging.Handler):
    """The tool's log on whatever stderr is now (click's, under a test runner)."""

    def emit(self, record: logging.LogRecord) -> None:
        click.echo(self.format(record), err=True)


_LOG_TO_STDERR = _Stderr()
_LOG_TO_STDERR.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))


def _set_verbose(ctx: click.Context, _param: click.Parameter, value: int) -> None:
    state = ctx.find_object(Context)
    if value and state is not None:
        set_verbosity(state, verbose=value)


def _set_quiet(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    state = ctx.find_object(Context)
    if value and state is not None:
        set_verbosity(state, quiet=True)


def repo_anywhere(command: click.Command) -> click.Command:
    """Give `command` (and every subcommand of a group) its own --repo, -v and -q, so that
    `kueue-gitops validate --repo DIR -q` works as `kueue-gitops --repo DIR -q validate` does."""
    if not any(p.name == "repo_anywhere" for p in command.params):
        command.params.append(
            click.Option(
                ["--repo", "repo_anywhere"],
                type=click.Path(file_okay=False, path_type=Path),
                expose_value=False,
                is_eager=True,
                callback=_set_repo,
                metavar="DIR",
                help=REPO_HELP,
            )
        )
        command.params.append(
            click.Option(
                ["-v", "--verbose", "verbose_anywhere"],
                count=True,
                expose_value=False,
                is_eager=True,
                callback=_set_verbose,
                help=VERBOSE_HELP,
            )
        )
        command.params.append(
            click.Option(
                ["-q", "--quiet", "quiet_anywhere"],
                is_flag=True,
                expose_value=False,
                is_eager=True,
                callback=_set_quiet,
                help=QUIET_HELP,
            )
        )
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            repo_anywhere(sub)
    return command


F = t.TypeVar("F", bound=t.Callable[..., t.Any])


def cluster_access(func: F) -> F:
    """--kubeconfig and --context, as kubectl has them (see auditor.live.access)."""
    func = click.option(
        "--context",
        "context",
        metavar="NAME",
        help="Kubeconfig context to use instead of the cluster profile's (one --cluster only).",
    )(func)
    func = click.option(
        "--kubeconfig",
        type=click.Path(dir_okay=False),
        metavar="FILE",
        help="Kubeconfig where each cluster profile's context is looked up "
        "(default: $KUBECONFIG, its files merged, else ~/.kube/config).",
    )(func)
    return func


def one_cluster_context(context: str | None, clusters: t.Sequence[str]) -> None:
    """--context names one cluster's credentials: with several clusters each keeps its own."""
    if context is not None and len(clusters) != 1:
        raise click.UsageError(
            f"--context {context} replaces one cluster's profile context: name exactly one "
            "--cluster (with several, each cluster is reached through its own profile's context)"
        )


FORMATS = ("auto", *REPORTER_BY_NAME)  # auto: github under GitHub Actions, else text


def _reporting(ctx: click.Context, _param: click.Parameter, value: str) -> str:
    state = ctx.find_object(Context)
    if state is not None:
        state.reporting = ctx
    return value


def output_format(func: F) -> F:
    """-o/--output: every command that reports takes it, with the same formats (the reporter
    registry's), and writes through `finish`."""
    return click.option(
        "-o",
        "--output",
        "output",
        default="auto",
        show_default=True,
        type=click.Choice(FORMATS),
        callback=_reporting,
        help="Report format; auto is GitHub annotations under Actions, else text.",
    )(func)


def old_output(command: str, new: str, *also: str) -> t.Callable[[F], F]:
    """The old -o/--output of a command that writes a file or folder, not a report: refused,
    naming `new`, its own option (-o is a report format everywhere else)."""

    def refuse(_ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
        if value is None:
            return
        if value in FORMATS:  # `-o json` once wrote a file named json
            raise click.UsageError(f"{command} writes no report (-o {value}): give {new} PATH")
        raise click.UsageError(f"-o is a report format; {command} takes {new} {value}")

    return click.option(
        "-o", "--output", *also, "old_output", hidden=True, expose_value=False, callback=refuse
    )


DEADLINE = 120.0  # seconds per cluster: a large cluster's LISTs take a few; a hung one, forever


def cluster_deadline(func: F) -> F:
    """--timeout: how long each cluster may take in all (each request has its own limits)."""
    return click.option(
        "--timeout",
        "timeout",
        type=click.FloatRange(min=1),
        default=DEADLINE,
        show_default=True,
        metavar="SECONDS",
        help="Seconds each cluster may take in all; what is unread by then makes the run "
        "incomplete (exit 3). Each request also gives up after 5s to connect, 30s to answer.",
    )(func)


def _renderers(_ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    mode.choose(value.lower() if value else None)  # None: not given, the profile decides


def renderers_mode(func: F) -> F:
    """--renderers exact|any: whether only the kustomize and helm releases the cluster's Argo
    CD runs may render (over $KUEUE_GITOPS_RENDERERS, over the profile's argocd.renderers)."""
    return click.option(
        "--renderers",
        type=click.Choice(mode.MODES, case_sensitive=False),
        envvar=mode.EXACT_ENV,
        expose_value=False,
        callback=_renderers,
        help="exact: only the kustomize and helm of the release the cluster's Argo CD runs may "
        "render (else the folder is renderer-unavailable); any: another release renders, noted "
        f"(default: ${mode.EXACT_ENV}, else each cluster profile's argocd.renderers, else any).",
    )(func)


def resolve_format(output: str) -> str:
    if output != "auto":
        return output
    return "github" if os.environ.get("GITHUB_ACTIONS") else "text"


def emit(report: Report, output: str) -> None:
    """Write `report` to stdout in `output` (auto resolved), whole: formatted first, then
    written at once, a signal meanwhile waiting until it is (a file the shell redirects the
    report to never holds half of one). A full or closed stdout is OutputError (exit 3)."""
    text = io.StringIO()
    REPORTER_BY_NAME[resolve_format(output)](report, text)
    with signals.held():
        to_stdout(text.getvalue(), what="the report")
        signals.mark_reported()


def exit_for(report: Report) -> t.NoReturn:
    """Exit with the status `report` decides (Report.exit_code, the only place one is)."""
    click.get_current_context().exit(report.exit_code)


def finish(report: Report, output: str) -> t.NoReturn:
    """Write `report` and exit with its status: how every command that reports ends."""
    emit(report, output)
    exit_for(report)


def _gateway_url(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    if value and not value.startswith(("http://", "https://")):
        raise click.BadParameter(f"{value!r} is not an http:// or https:// URL")
    return value


def metrics_output(func: F) -> F:
    """--metrics-file and --pushgateway: the results as Prometheus metrics."""
    func = click.option(
        "--pushgateway",
        metavar="URL",
        callback=_gateway_url,
        help="Push the results as metrics to this Prometheus Pushgateway "
        "(job kueue-gitops, one group per command and cluster).",
    )(func)
    func = click.option(
        "--metrics-file",
        type=click.Path(dir_okay=False, path_type=Path),
        metavar="FILE",
        help="Write the results as metrics for node_exporter's textfile collector (*.prom).",
    )(func)
    return func


def baseline_options(func: F) -> F:
    """--baseline FILE and --write-baseline: adopt the tool on an estate with findings already
    (auditor/repo/baseline.py)."""
    func = click.option(
        "--write-baseline",
        is_flag=True,
        help="Record this run's findings in the --baseline file (created, or written again: "
        "entries that no longer match are dropped); the run then passes. Refused (exit 2) while "
        "a finding says part of the run was not checked (renderer-unavailable, ...).",
    )(func)
    func = click.option(
        "--baseline",
        "baseline_file",
        type=click.Path(dir_okay=False, path_type=Path),
        metavar="FILE",
        help="Findings recorded in FILE are reported as baselined and fail nothing: only new "
        "ones do. The report counts them, and the entries that no longer match.",
    )(func)
    return func


@dataclass
class Adoption:
    """What --baseline and --write-baseline ask for; the file is read before the run, so a
    bad one fails at once, not after minutes of reading clusters."""

    file: Path | None = None
    write: bool = False
    previous: baseline.Baseline | None = None  # the file as it is (None: none yet)

    @classmethod
    def given(cls, file: Path | None, write: bool, command: str) -> Adoption:
        if file is None:
            if write:
                raise click.UsageError("--write-baseline needs --baseline FILE: where to write it")
            return cls()
        from auditor.repo import baseline

        previous = None if write and not file.exists() else baseline.read(file, command)
        return cls(file, write, previous)

    def apply(self, ctx: Context, report: Report, *, partial: bool) -> None:
        """Mark `report`'s findings the baseline holds (after writing it, with --write-baseline).
        `partial`: the run covered only some clusters (--cluster)."""
        if self.file is None:
            return
        from auditor.repo import baseline

        if self.write and not report.incomplete:  # ConfigError if part of it went unchecked
            baseline.rewrite(report, self.file, self.previous, partial=partial)
        else:
            if self.write:
                ctx.note(f"{self.file} not written: a baseline is written only from a complete run")
            if self.previous is not None:
                baseline.apply(report, self.previous, partial=partial)
        if report.baseline is not None and ctx.verbosity > 0:  # -v: every baselined finding
            report.baseline = dataclasses.replace(report.baseline, listed=True)
