"""`plan job FILE`: the answer first (when the Job is admitted, on which ClusterQueue
and flavors, whom it preempts, or why never), then the timeline that leads there: each Workload
that changes until then, a row of the chart, its admissions, preemptions and finishes as marks
on the time axis. Read from the report's `job` section (auditor/replay/livestart.py)."""

from __future__ import annotations

from auditor.report import charts
from auditor.report.charts import Chart
from auditor.report.pages.parts import Doc, e
from auditor.report.replay import duration

JOB = "the Job"  # how the forecast names the Workload it was asked about


def lead(job: Doc) -> str:
    said = (
        f"{job['cluster']}: the Job in {job['namespace']}/{job['localQueue']} submitted now, "
        f"simulated through Kueue {job.get('kueueVersion') or '?'}'s scheduler from the cluster "
        "as it is"
    )
    after = job.get("admittedAfterSeconds")
    if after is None:
        when = f"never admitted: {job.get('pendingReason') or 'no reason given by Kueue'}"
        where = "-"
    else:
        when = f"admitted after {duration(after)}"
        where = f"ClusterQueue {job.get('clusterQueue')}, flavors {job.get('flavors') or '-'}"
    victims = job.get("preempts") or []
    preempts = (
        "<ul>" + "".join(f"<li>{e(v)}</li>" for v in victims) + "</ul>" if victims else "nothing"
    )
    return (
        f'<section id="answer" class="answer {"meets" if after is not None else "misses"}" '
        'aria-label="The answer">'
        f'<p class="headline">{e(said)}</p><dl>'
        f'<dt>When</dt><dd id="when">{e(when)}</dd>'
        f'<dt>Where</dt><dd id="where">{e(where)}</dd>'
        f'<dt>Preempts</dt><dd id="preempts">{preempts}</dd></dl></section>'
    )


def figures(job: Doc) -> list[Chart]:
    """The timeline: one row per Workload that changes (the Job on top), a series per kind of
    change."""
    changes = job.get("changes") or []
    if not changes:
        return []
    names = sorted({c["workload"] for c in changes}, key=lambda n: (n != JOB, n))
    row = {n: len(names) - 1 - i for i, n in enumerate(names)}  # the first on top
    series: dict[str, list[tuple[float, float]]] = {}
    for c in changes:
        series.setdefault(c["kind"], []).append((round(c["at"] / 60, 3), row[c["workload"]]))
    end = max(1.0, max(c["at"] for c in changes) / 60)
    svg = charts.timeline(
        "job-timeline",
        "Until the Job is admitted: what changes, Workload by Workload",
        [(n, row[n]) for n in names],
        series,
        x_title="minutes from now",
        xrange=(0.0, round(end, 3)),
    )
    rows = [
        [duration(c["at"]), c["workload"], c["kind"], c.get("by") or "", c.get("flavors") or ""]
        for c in changes
    ]
    return [
        Chart(
            "job-timeline",
            "Each Workload that changes until the Job is admitted",
            list(series),
            svg,
            ["after", "Workload", "what", "by", "flavors"],
            rows,
            {"changes": changes},
        )
    ]
