"""Which pages a report's page shows: its lead and the charts of its sections, chosen by what the
JSON report (`Report.to_json`) holds."""

from __future__ import annotations

from auditor.report.charts import Chart
from auditor.report.pages import drift, job, quota, replay, status, sweep
from auditor.report.pages.parts import Doc


def lead(doc: Doc) -> str:
    """The answer a page leads with, above its charts (HTML; empty for a page without one)."""
    if "sweep" in doc:
        return sweep.lead(doc["sweep"])
    if "job" in doc:
        return job.lead(doc["job"])
    return ""


def sections(doc: Doc) -> list[tuple[str, list[Chart]]]:
    """The charts of a report, by section: what the command's JSON holds decides."""
    out: list[tuple[str, list[Chart]]] = []
    if "replay" in doc:
        out.append(("The simulated day, base and head", replay.figures(doc["replay"])))
    elif "sweep" in doc:
        out.append(("The sweep's frontier", [sweep.chart(doc["sweep"])]))
    elif "job" in doc:
        out.append(("The timeline that leads there", job.figures(doc["job"])))
    elif doc["command"] == "plan":
        out.append(("Quota, base → head", quota.figures(doc)))
    if doc["command"] == "drift":
        out.append(("Drift", drift.figures(doc)))
    if "fleet" in doc:
        out.append(("The fleet's Kueue releases", drift.fleet_charts(doc["fleet"])))
    if doc["command"] == "status" and "clusterQueues" in doc:
        out.append((f"Quota on {doc.get('cluster')}", status.figures(doc)))
    return [(name, figures) for name, figures in out if figures]
