"""The text report (auditor/report/text.py): a new finding is not lost among baselined ones."""

from __future__ import annotations

import dataclasses
import io

from auditor import rules
from auditor.model import BaselineSummary, ClusterResult, Finding, Report, Suppression
from auditor.report import text

BASELINED = Suppression("in the baseline", None, "b.yaml:4")


def finding(rule: str, name: str, *, baselined: bool = True) -> Finding:
    return Finding(
        rules.get(rule),
        f"{rule} on {name}",
        cluster="gpu-prod",
        kind="ClusterQueue",
        name=name,
        file="clusters/gpu-prod/clusterqueues.yaml",
        line=3,
        suppressed=BASELINED if baselined else None,
    )


def estate(*, listed: bool) -> str:
    """52 baselined findings of two rules, and one new error."""
    findings = [finding("rbac-builtin-role", f"old-{i}") for i in range(40)]
    findings += [finding("borrowing-over-lendable", f"lender-{i}") for i in range(12)]
    findings.append(finding("capacity-exceeded", "team-a-cq", baselined=False))
    summary = BaselineSummary("b.yaml", 52, 0, listed=listed)
    report = Report("validate", findings, [ClusterResult("gpu-prod")], baseline=summary)
    out = io.StringIO()
    text.write(report, out)
    return out.getvalue()


def test_baselined_findings_are_one_line_of_counts_by_rule() -> None:
    out = estate(listed=False)
    assert "baselined: 52 finding(s): rbac-builtin-role 40, borrowing-over-lendable 12" in out
    assert "(-v lists them)" in out
    assert "old-0" not in out and "lender-0" not in out
    assert "capacity-exceeded on team-a-cq  [capacity-exceeded]" in out
    assert len(out.splitlines()) == 6  # heading, the error (2), counts, baseline, totals


def test_with_verbose_every_baselined_finding_is_listed() -> None:
    out = estate(listed=True)
    assert all(f"old-{i}" in out for i in range(40))
    assert "baselined: 52 finding(s)" not in out


def test_without_a_baseline_nothing_is_folded() -> None:
    shown = dataclasses.replace(finding("capacity-exceeded", "q"), suppressed=None)
    out = io.StringIO()
    text.write(Report("validate", [shown], [ClusterResult("gpu-prod")]), out)
    assert "baselined:" not in out.getvalue() and "q  [capacity-exceeded]" in out.getvalue()
