"""verify's report for people: each check, passed, failed or skipped, with the Workloads of a
failed one."""

from __future__ import annotations

import typing as t

from auditor.model import Report

if t.TYPE_CHECKING:
    from auditor.verify.verification import Verification

MARK = {"passed": "PASS", "failed": "FAIL", "skipped": "SKIP"}


def text(report: Report, out: t.TextIO) -> None:
    result = t.cast("Verification", report.section)
    for check in result.checks:
        doc = check.to_json()
        where = f" [{check.cluster_queue}]" if check.cluster_queue else ""
        out.write(f"{MARK[doc['status']]} {check.name}{where}: {check.summary}\n")
        if doc["status"] == "failed":
            for w in doc["workloads"]:
                conds = ", ".join(
                    f"{c['type']}={c['status']}" + (f" ({c['reason']})" if c["reason"] else "")
                    for c in w["conditions"]
                )
                out.write(
                    f"       {w['namespace']}/{w['name']} priority {w['priority']}: {conds}\n"
                )
    for c in report.clusters:
        for error in c.errors:
            out.write(f"INCOMPLETE {c.name}: {error}\n")
    failed = sum(1 for c in result.checks if c.passed is False)
    out.write(
        f"verify: {report.status}: {len(result.checks)} check(s), {failed} failed, "
        f"in {result.seconds:.0f}s\n"
    )
