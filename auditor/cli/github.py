"""`kueue-gitops github ...`: the steps the GitHub workflows run on GitHub itself.

They reach GitHub with the step's GITHUB_TOKEN and GITHUB_REPOSITORY (GITHUB_API_URL on GitHub
Enterprise); a missing variable is a configuration error (2), a refusal from GitHub exit 3.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from auditor.cli.options import Context, finish, output_format, pass_context
from auditor.errors import ConfigError
from auditor.github import issues
from auditor.github.api import GitHubApi
from auditor.github.rest import RestGitHub
from auditor.model import Report
from auditor.report import contract


def _api(ctx: Context) -> GitHubApi:
    return ctx.github_api() if ctx.github_api else RestGitHub.from_env(os.environ)


def _done(step: str, outcome: issues.StepOutcome, output: str) -> None:
    finish(Report(f"github {step}", section=outcome), output)


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from exc


@click.group()
def github() -> None:
    """Drift issues, the plan's pull-request comment and the schema pull request."""


@github.command("drift-issue")
@click.option("--cluster", required=True, help="The cluster the report is about.")
@click.option(
    "--report",
    "report_path",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="`kueue-gitops drift -o json` output; missing or malformed is an error, never clean.",
)
@click.option("--run-url", metavar="URL", help="Link to the workflow run.")
@output_format
@pass_context
def drift_issue(
    ctx: Context, cluster: str, report_path: Path, run_url: str | None, output: str
) -> None:
    """Create, update, close or reopen the cluster's drift issue.

    Exit 3, touching nothing, when the drift report is incomplete.
    """
    report = contract.read(report_path, "drift")
    owners = _owners(ctx, cluster)
    outcome = issues.sync_drift_issue(_api(ctx), cluster, report, run_url, owners)
    finish(issues.drift_issue_report(cluster, report, outcome), output)


def _owners(ctx: Context, cluster: str) -> tuple[str, ...]:
    """The cluster profile's owners, to mention; none when run outside the repository."""
    try:
        repo = ctx.repository()
    except ConfigError:
        return ()  # a report alone is enough to keep the issue; the mention needs the checkout
    return repo.cluster(cluster).owners if cluster in repo.clusters else ()


@github.command("pr-comment")
@click.option("--pr", "number", required=True, type=click.IntRange(min=1), help="PR number.")
@click.option(
    "--body",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Markdown whose first line is its hidden marker (<!-- ... -->).",
)
@output_format
@pass_context
def pr_comment(ctx: Context, number: int, body: Path, output: str) -> None:
    """Create the pull request's comment with this marker, or edit it in place."""
    _done("pr-comment", issues.upsert_comment(_api(ctx), number, _text(body)), output)


@github.command("ensure-pr")
@click.option("--branch", required=True, help="The pushed branch.")
@click.option("--base", required=True, help="The branch to merge into.")
@click.option("--title", required=True)
@click.option("--body", default="")
@output_format
@pass_context
def ensure_pr(ctx: Context, branch: str, base: str, title: str, body: str, output: str) -> None:
    """Open a pull request from a pushed branch unless one is open already."""
    _done("ensure-pr", issues.ensure_pull(_api(ctx), branch, base, title, body), output)


@github.command()
@pass_context
def clusters(ctx: Context) -> None:
    """Print the repository's clusters as a JSON list (a workflow's job matrix)."""
    click.echo(json.dumps(sorted(ctx.repository().clusters)))
