"""upgrade-check's report for people: the releases, what etcd stores and the target serves, the
admitted Workloads' recovery, then the findings."""

from __future__ import annotations

import typing as t

from auditor.model import Report
from auditor.report import text as report_text

if t.TYPE_CHECKING:
    from auditor.upgrade.readiness import Checked


def text(report: Report, out: t.TextIO) -> None:
    summary = t.cast("Checked", report.section).summary
    out.write(
        f"{summary['direction']}: Kueue {summary['from'] or '(version not recorded)'} -> "
        f"{summary['to']}\n"
    )
    for crd, stored in sorted(summary["storedVersions"].items()):
        serves = summary["targetServes"].get(crd) or []
        out.write(
            f"  {crd}: stored {', '.join(stored)}; target serves {', '.join(serves) or '-'}\n"
        )
    for a in summary["admitted"]:
        recovery = a["checkpoint"] or ("tenant evidence" if a["evidence"] else "NONE")
        out.write(f"  admitted {a['workload']} in {a['clusterQueue']}: recovery {recovery}\n")
    report_text.write(report, out)
