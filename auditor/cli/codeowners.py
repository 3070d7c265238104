"""`kueue-gitops codeowners`: write CODEOWNERS from the profiles, or check it is current."""

from __future__ import annotations

import click

from auditor import codeowners as auditor_codeowners
from auditor.cli.options import Context, finish, output_format, pass_context
from auditor.errors import ConfigError
from auditor.model import Report
from auditor.repo.outfile import write_whole


@click.command()
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing; exit 1 when CODEOWNERS is stale or leaves a repository path unowned.",
)
@output_format
@pass_context
def codeowners(ctx: Context, check: bool, output: str) -> None:
    """Generate CODEOWNERS: the platform owns all, each tenant team its LocalQueues."""
    repo = ctx.repository()
    if check:
        report = Report("codeowners", findings=auditor_codeowners.check(repo))
        finish(report, output)
    if repo.root is None:
        raise ConfigError("codeowners writes into a working tree; pass --repo DIR")
    target = repo.root / auditor_codeowners.FILE
    text = auditor_codeowners.render(repo)
    unchanged = target.is_file() and target.read_text() == text
    if not unchanged:
        write_whole(target, text, what="CODEOWNERS")
    rules = len(auditor_codeowners.owner_rules(repo))
    click.echo(f"{target}: {rules} rules, {'unchanged' if unchanged else 'written'}")
