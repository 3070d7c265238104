"""Plain text for a terminal: grouped by cluster, then category; one line a finding."""

from __future__ import annotations

import itertools
import typing as t

from auditor.model import Finding, Report


def _where(f: Finding) -> str:
    if f.file:
        return f"{f.file}:{f.line}" if f.line else f.file
    return "(live only)" if f.change == "unmanaged" else "-"


def _line(f: Finding) -> str:
    head = f"  {f.severity:<7} {_where(f)}"
    obj = f" {f.kind} {f.namespace + '/' if f.namespace else ''}{f.name}" if f.kind else ""
    path = f" {f.path}" if f.path else ""
    change = ""
    if f.change == "modified":
        change = f" (repo: {f.desired!r}, live: {f.live!r})"
    elif f.change:
        change = f" ({f.change})"
    line = f"{head}{obj}{path}{change}\n          {f.message}  [{f.rule.id}]"
    if f.suppressed is not None:
        line += f"\n          {f.suppressed.describe()} ({f.suppressed.source})"
    return line


def write(report: Report, stream: t.TextIO) -> None:
    def key(f: Finding) -> tuple[str, str]:
        return (f.cluster or "", f.category)

    for (cluster, category), group in itertools.groupby(sorted(report.findings, key=key), key):
        stream.write(f"{cluster or 'repository'} · {category}\n")
        for finding in group:
            stream.write(_line(finding) + "\n")
    for c in report.clusters:
        for error in c.errors:
            stream.write(f"INCOMPLETE {c.name}: {error}\n")
        if c.throttled:
            stream.write(f"THROTTLED {c.name}: its API server made the run wait {c.throttled:g}s\n")
    if report.baseline is not None:
        stream.write(report.baseline.describe() + "\n")
    shown = [f for f in report.findings if f.suppressed is None]
    errors = sum(1 for f in shown if f.severity == "error")
    warnings = len(shown) - errors
    baselined = sum(1 for f in report.findings if f.suppressed and f.suppressed.baselined)
    accepted = len(report.findings) - len(shown) - baselined
    stream.write(
        f"{report.command}: {report.status}: {errors} error(s), {warnings} warning(s)"
        + (f", {accepted} suppressed" if accepted else "")
        + (f", {baselined} baselined" if baselined else "")
        + (
            f", {sum(c.status == 'incomplete' for c in report.clusters)} cluster(s) incomplete"
            if report.incomplete
            else ""
        )
        + "\n"
    )
