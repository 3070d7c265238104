"""The catalogue as text, Markdown (docs/rules.md) and JSON; strings only, no I/O."""

from __future__ import annotations

import json
import textwrap
import typing as t

from auditor.rules.declarations import catalogue
from auditor.rules.rule import STAGES, Example, Rule

REGENERATE = "kueue-gitops rules -o markdown > docs/rules.md"
WIDTH = 88


def listing(rules: t.Iterable[Rule] | None = None) -> str:
    """One line per rule: ID, severity, category, summary, in aligned columns."""
    rows = [("RULE", "SEVERITY", "CATEGORY", "SUMMARY")]
    rows += [(r.id, str(r.severity), r.category, r.summary) for r in _all(rules)]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return "".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row[:3], widths, strict=True)) + f"  {row[3]}\n"
        for row in rows
    )


def _example_text(label: str, example: Example) -> str:
    if example.file is None:
        return textwrap.fill(f"{label}: {example.text}", WIDTH, subsequent_indent="    ")
    return f"{label} ({example.file}):\n{textwrap.indent(example.text, '    ')}".rstrip()


def text(rule: Rule) -> str:
    """Everything about one rule, as `explain` prints it."""
    stage = STAGES[rule.stage][0]
    parts = [
        f"{rule.id}: {rule.severity}, category {rule.category} ({stage})",
        textwrap.fill(rule.summary, WIDTH),
        textwrap.fill(rule.help, WIDTH),
        _example_text("Passes", rule.passes),
        _example_text("Fails", rule.fails),
        f"Documentation: {rule.anchor}\n  {rule.url}",
    ]
    return "\n\n".join(parts) + "\n"


def help_text(rule: Rule) -> str:
    """The help without the heading line: what SARIF viewers show under the rule's name."""
    return text(rule).split("\n\n", 1)[1]


def _example_markdown(label: str, example: Example) -> str:
    if example.file is None:
        return f"**{label}:** {example.text}"
    return f"**{label}** (`{example.file}`):\n\n```yaml\n{example.text}```"


def help_markdown(rule: Rule) -> str:
    """One rule's documentation in Markdown, without a heading."""
    facts = f"**{rule.severity}** · category `{rule.category}` · {STAGES[rule.stage][0].lower()}"
    parts = [
        facts,
        rule.summary,
        rule.help,
        _example_markdown("Passes", rule.passes),
        _example_markdown("Fails", rule.fails),
    ]
    return "\n\n".join(parts) + "\n"


def _cell(value: str) -> str:
    return value.replace("|", "\\|")


def _all(rules: t.Iterable[Rule] | None) -> list[Rule]:
    return list(catalogue().values() if rules is None else rules)


def markdown(rules: t.Iterable[Rule] | None = None) -> str:
    """docs/rules.md: an index table, then a section per rule (its anchor is its ID)."""
    rules = _all(rules)
    out = [
        "# Rules",
        "<!-- Generated from the rules files beside the code (auditor/**/rules.yaml, "
        f"auditor/validate/checks/*.rules.yaml) by `{REGENERATE}`; do not edit. -->",
        "Every finding names one of these rules. `kueue-gitops rules` lists them and "
        "`kueue-gitops explain RULE` prints one. An error fails the run (exit 1); a warning "
        "fails it only under `--strict`. Each rule has an example that passes and one that "
        "fails; the manifest examples are run by the test suite.",
        "| Rule | Severity | Category | Summary |\n|---|---|---|---|\n"
        + "\n".join(
            f"| [`{r.id}`](#{r.id}) | {r.severity} | {r.category} | {_cell(r.summary)} |"
            for r in rules
        ),
    ]
    for stage, (title, about) in STAGES.items():
        members = [r for r in rules if r.stage == stage]
        if not members:
            continue
        out += [f"## {title}", about]
        out += [f"### {r.id}\n\n{help_markdown(r).rstrip()}" for r in members]
    return "\n\n".join(out) + "\n"


def to_json(rule: Rule) -> dict[str, t.Any]:
    def example(e: Example) -> dict[str, t.Any]:
        return {"file": e.file, "text": e.text}

    return {
        "id": rule.id,
        "severity": str(rule.severity),
        "category": rule.category,
        "stage": rule.stage,
        "summary": rule.summary,
        "help": rule.help,
        "passes": example(rule.passes),
        "fails": example(rule.fails),
        "docs": rule.url,
    }


def as_json(rules: t.Iterable[Rule] | None = None) -> str:
    """`rules -o json`: every field of every rule (its own document, not a findings report)."""
    return (
        json.dumps({"schemaVersion": 1, "rules": [to_json(r) for r in _all(rules)]}, indent=2)
        + "\n"
    )


# `kueue-gitops rules -o FORMAT`: the catalogue is documentation, not findings, so it has its own
# formats rather than the reporters' (auditor/report/), and no exit status to decide.
CATALOGUE_FORMATS: dict[str, t.Callable[[t.Iterable[Rule] | None], str]] = {
    "text": listing,
    "json": as_json,
    "markdown": markdown,
}
