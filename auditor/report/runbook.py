"""hold's and resume's report for people: what each cluster's file became, what was patched
live and committed, or why a resume stopped first."""

from __future__ import annotations

import typing as t

from auditor.model import Report
from auditor.report import text as report_text

if t.TYPE_CHECKING:
    from auditor.runbook.hold import HoldOutcome


def text(report: Report, out: t.TextIO) -> None:
    outcome = t.cast("HoldOutcome", report.section)
    verb, cq = outcome.action, outcome.cluster_queue
    if outcome.checked:
        out.write(f"dry-run: the folder of {', '.join(outcome.checked)} passed\n")
    if outcome.refused:
        report_text.write(report, out)
        out.write(
            f"not resuming {cq}: the server-side dry-run of the cluster's folder failed; correct "
            "the repository and resume again, or resume with --force (the commit message says "
            "so)\n"
        )
        return
    for target in outcome.changed:
        out.write(f"{verb}: {target.file}:{target.line} ClusterQueue {cq} ({target.cluster})\n")
    for target, why in outcome.unchanged:
        out.write(f"unchanged: {target.file}:{target.line} ({target.cluster}): {why}\n")
    for name in outcome.applied:
        done = "Hold" if verb == "hold" else "removed"
        out.write(f"live: ClusterQueue {cq} on {name} patched (stopPolicy {done})\n")
    if outcome.commit:
        out.write(
            f"committed {outcome.commit[:12]} on new branch {outcome.branch}; "
            "push it and open a pull request\n"
        )
    else:
        out.write("nothing to commit: the repository already says so\n")
