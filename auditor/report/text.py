"""Plain text for a terminal: grouped by cluster, then category; one line a finding."""

from __future__ import annotations

import collections
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


def _baselined(f: Finding) -> bool:
    return f.suppressed is not None and f.suppressed.baselined


def _counted_by_rule(findings: list[Finding]) -> str:
    """The baselined findings as one line: how many, of which rules (the most first)."""
    by_rule = collections.Counter(f.rule.id for f in findings)
    rules = ", ".join(f"{rule} {n}" for rule, n in sorted(by_rule.items(), key=_most_first))
    return f"baselined: {len(findings)} finding(s): {rules} (-v lists them)\n"


def _most_first(item: tuple[str, int]) -> tuple[int, str]:
    return (-item[1], item[0])


def write(report: Report, stream: t.TextIO) -> None:
    def key(f: Finding) -> tuple[str, str]:
        return (f.cluster or "", f.category)

    # A baseline holds what the estate had: in full only with -v, else one line of counts, so a
    # new finding is not lost among every baselined one.
    listed = report.baseline is None or report.baseline.listed
    shown = [f for f in report.findings if listed or not _baselined(f)]
    for (cluster, category), group in itertools.groupby(sorted(shown, key=key), key):
        stream.write(f"{cluster or 'repository'} · {category}\n")
        for finding in group:
            stream.write(_line(finding) + "\n")
    for c in report.clusters:
        for error in c.errors:
            stream.write(f"INCOMPLETE {c.name}: {error}\n")
        if c.throttled:
            stream.write(f"THROTTLED {c.name}: its API server made the run wait {c.throttled:g}s\n")
    folded = [] if listed else [f for f in report.findings if _baselined(f)]
    if folded:
        stream.write(_counted_by_rule(folded))
    if report.baseline is not None:
        stream.write(report.baseline.describe() + "\n")
    live = [f for f in report.findings if f.suppressed is None]
    errors = sum(1 for f in live if f.severity == "error")
    warnings = len(live) - errors
    baselined = sum(1 for f in report.findings if _baselined(f))
    accepted = len(report.findings) - len(live) - baselined
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
