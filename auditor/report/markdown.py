"""Markdown for pull-request comments and scheduled-report issues."""

from __future__ import annotations

import typing as t

from auditor.model import Report

MARKER = "<!-- kueue-gitops-report -->"  # lets a workflow find and update its own comment
# A line where `github pr-comment` may cut a body over GitHub's limit into the next comment
# (before each cluster's <details>); invisible on GitHub.
SPLIT = "<!-- kueue-gitops-split -->"


def cell(value: t.Any) -> str:
    """A value as one markdown table cell: a `|` would end the cell, a newline the row."""
    text = "" if value is None else str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def table_row(values: t.Iterable[t.Any]) -> str:
    """One markdown table row (no newline)."""
    return "| " + " | ".join(cell(v) for v in values) + " |"


def write(report: Report, stream: t.TextIO) -> None:
    icon = {"clean": "✅", "findings": "❌", "incomplete": "⚠️"}[report.status]
    stream.write(f"{MARKER}\n### {icon} kueue-gitops {report.command}: {report.status}\n\n")
    for c in report.clusters:
        if c.errors:
            stream.write(f"**{c.name} incomplete:** " + "; ".join(c.errors) + "\n\n")
    if report.baseline is not None:
        stream.write(report.baseline.describe() + "\n\n")
    if not report.findings:
        stream.write("No findings.\n")
        return
    drift = any(f.change for f in report.findings)
    cols = ["Severity", "Cluster", "Category", "Object", "Where", "Message"]
    if drift:
        cols[4:4] = ["Field", "Repo", "Live"]
    stream.write("| " + " | ".join(cols) + " |\n|" + "---|" * len(cols) + "\n")
    for f in report.findings:
        obj = f"{f.kind} {f.namespace + '/' if f.namespace else ''}{f.name}" if f.kind else ""
        where = f"`{f.file}:{f.line}`" if f.file else ""
        severity, message = str(f.severity), f.message
        if f.suppressed is not None:
            severity = f"{f.suppressed.label} {severity}"
            message += f" ({f.suppressed.describe()})"
        row = [severity, f.cluster or "", f.category, obj, where, message]
        if drift:
            row[4:4] = [f"`{f.path}`" if f.path else "", f.desired, f.live]
        stream.write(table_row(row) + "\n")
