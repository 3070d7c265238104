"""`kueue-gitops rules` and `kueue-gitops explain`: the rule catalogue, for people and tools."""

from __future__ import annotations

import click

from auditor.errors import ConfigError
from auditor.rules import UnknownRule, catalogue, get, render


@click.command()
@click.option(
    "-o",
    "--output",
    default="text",
    show_default=True,
    type=click.Choice(list(render.CATALOGUE_FORMATS)),
    help="text: one line per rule; json: every field; markdown: the reference, docs/rules.md.",
)
def rules(output: str) -> None:
    """List every rule a finding can name: ID, severity, category and summary."""
    click.echo(render.CATALOGUE_FORMATS[output](catalogue().values()), nl=False)


@click.command()
@click.argument("rule_id", metavar="RULE")
def explain(rule_id: str) -> None:
    """Explain one rule: why it matters, how to fix it, an example that passes and one that
    fails."""
    try:
        rule = get(rule_id)
    except UnknownRule as exc:
        raise ConfigError(f"{exc.args[0]} (`kueue-gitops rules` lists them)") from None
    click.echo(render.text(rule), nl=False)
